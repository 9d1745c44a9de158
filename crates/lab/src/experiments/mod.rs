//! One module per paper figure, table or statement. Each module's doc quotes what
//! the paper claims and says how the experiment measures it.

use crate::harness::Experiment;
use crate::LabError;

pub mod boundary_test;
pub mod common;
pub mod dab_iometer;
pub mod dr_apply_speedup;
pub mod dr_batch_interval;
pub mod dr_common;
pub mod dr_pgbench;
pub mod dr_power_highend;
pub mod dr_power_midrange;
pub mod excluded_blocks;
pub mod ext2_bonnie_write;
pub mod ext2_single;
pub mod ext2_streams;
pub mod fig1_efficiency;
pub mod fig3_rotational_latency;
pub mod fig6_head_time;
pub mod fig7_breakdown;
pub mod fig8_variance;
pub(crate) mod file_layout;
pub mod lfs_write_cost;
pub mod raid5_alignment;
pub mod raid5_fs;
pub mod raid5_streams;
pub mod table2_ffs;
pub mod table2_ffs_writes;
mod table2_testbed;
pub mod validation_host;
pub mod video;
pub mod video_hard;
pub mod video_soft;
pub mod writes;
pub mod zero_latency_matters;
pub mod zero_latency_test;

/// Every experiment, in the order the report shows them.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &fig1_efficiency::Fig1Efficiency,
        &fig3_rotational_latency::Fig3RotationalLatency,
        &fig6_head_time::Fig6HeadTime,
        &fig7_breakdown::Fig7Breakdown,
        &writes::Writes,
        &fig8_variance::Fig8Variance,
        &zero_latency_matters::ZeroLatencyMatters,
        &excluded_blocks::ExcludedBlocks,
        &boundary_test::BoundaryTest,
        &zero_latency_test::ZeroLatencyTest,
        &dab_iometer::DabIometer,
        &raid5_alignment::Raid5Alignment,
        &video_soft::VideoSoft,
        &video_hard::VideoHard,
        &lfs_write_cost::LfsWriteCost,
        &table2_ffs::Table2Ffs,
        &ext2_single::Ext2Bonnie,
        &ext2_single::Ext2Diff,
        &ext2_streams::Ext2Streams,
        &raid5_fs::Raid5Bonnie,
        &raid5_fs::Raid5Diff,
        &raid5_streams::Raid5Streams,
        &dr_power_highend::DrPowerHighend,
        &dr_batch_interval::DrBatchInterval,
        &dr_apply_speedup::DrApplySpeedup,
        &dr_power_midrange::DrPowerMidrange,
        &dr_pgbench::DrPgbench,
    ]
}

/// The experiment called `id`.
pub fn find(id: &str) -> Result<&'static dyn Experiment, LabError> {
    let every = all();
    every
        .iter()
        .find(|e| e.id() == id)
        .copied()
        .ok_or_else(|| LabError::UnknownExperiment {
            id: id.to_string(),
            known: every.iter().map(|e| e.id()).collect::<Vec<_>>().join(", "),
        })
}
