//! # spinstack-param: DiskSim parameter files
//!
//! OWNER: param helper. Parses the libparam grammar into a tree with file/line
//! positions on every value; knows nothing about what the parameters mean.
