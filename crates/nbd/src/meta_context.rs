//! Metadata contexts: the data of `LIST_META_CONTEXT` and `SET_META_CONTEXT`, parsed
//! strictly (every length checked against what is left, nothing left over), and the
//! one context this server has, `base:allocation`.
//!
//! Queries this server answers (the `base:` namespace's forms from the protocol):
//!
//! | query             | `LIST`                    | `SET`                        |
//! |-------------------|---------------------------|------------------------------|
//! | none at all       | `base:allocation`         | selects nothing              |
//! | `base:`           | `base:allocation`         | ignored (the protocol's rule)|
//! | `base:allocation` | `base:allocation`         | selects `base:allocation`    |
//! | `base:` + other   | ignored                   | ignored                      |
//! | other namespace   | ignored                   | ignored                      |
//! | no colon, or an empty namespace | `REP_ERR_INVALID` | `REP_ERR_INVALID`      |
//!
//! A context matched by several queries is answered once. The context ID given by
//! `SET` is the constant [`BASE_ALLOCATION_ID`], so it is the same however often a
//! connection sets it.

use crate::wire::MAX_STRING_BYTES;

/// The name of the one context this server supports.
pub const BASE_ALLOCATION: &str = "base:allocation";
/// The ID `SET_META_CONTEXT` gives `base:allocation` (any value is allowed; a
/// constant is stable per connection and across them).
pub const BASE_ALLOCATION_ID: u32 = 1;

/// The parts of a `LIST_META_CONTEXT` or `SET_META_CONTEXT` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaContextRequest<'a> {
    pub export_name: &'a [u8],
    pub queries: Vec<&'a [u8]>,
}

/// Why a meta-context request was refused (answered `REP_ERR_INVALID` with this text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetaRequestError {
    #[error("export name length field missing")]
    NoNameLength,
    #[error("export name runs past the option data")]
    NameTooLong,
    #[error("query count field missing")]
    NoQueryCount,
    #[error("query {index}: length field missing")]
    NoQueryLength { index: usize },
    #[error("query {index}: runs past the option data")]
    QueryPastEnd { index: usize },
    #[error("query {index}: longer than the protocol's 4096-byte string limit")]
    QueryOverLimit { index: usize },
    #[error("query {index}: does not start with a namespace and a colon")]
    QueryWithoutNamespace { index: usize },
    #[error("{extra_bytes} bytes after the last query")]
    TrailingBytes { extra_bytes: usize },
}

/// Parses `u32 name length, name, u32 query count, count × (u32 length, query)`.
/// The count is only trusted as far as the data bears it out, so a hostile count
/// costs nothing.
pub fn decode_meta_context_request(
    data: &[u8],
) -> Result<MetaContextRequest<'_>, MetaRequestError> {
    let mut rest = data;
    let name_length = take_u32(&mut rest).ok_or(MetaRequestError::NoNameLength)?;
    let export_name = take(&mut rest, name_length).ok_or(MetaRequestError::NameTooLong)?;
    let count = take_u32(&mut rest).ok_or(MetaRequestError::NoQueryCount)?;
    let mut queries = Vec::new();
    for index in 0..count as usize {
        let length = take_u32(&mut rest).ok_or(MetaRequestError::NoQueryLength { index })?;
        let query = take(&mut rest, length).ok_or(MetaRequestError::QueryPastEnd { index })?;
        if query.len() > MAX_STRING_BYTES {
            return Err(MetaRequestError::QueryOverLimit { index });
        }
        if namespace(query).is_none_or(<[u8]>::is_empty) {
            return Err(MetaRequestError::QueryWithoutNamespace { index });
        }
        queries.push(query);
    }
    if !rest.is_empty() {
        return Err(MetaRequestError::TrailingBytes {
            extra_bytes: rest.len(),
        });
    }
    Ok(MetaContextRequest {
        export_name,
        queries,
    })
}

/// Encodes a request (for clients and tests); the inverse of
/// [`decode_meta_context_request`].
pub fn encode_meta_context_request(export_name: &[u8], queries: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(export_name.len() as u32).to_be_bytes());
    out.extend_from_slice(export_name);
    out.extend_from_slice(&(queries.len() as u32).to_be_bytes());
    for query in queries {
        out.extend_from_slice(&(query.len() as u32).to_be_bytes());
        out.extend_from_slice(query);
    }
    out
}

/// Whether `LIST_META_CONTEXT` with `queries` lists `base:allocation`.
pub fn list_finds_base_allocation(queries: &[&[u8]]) -> bool {
    queries.is_empty()
        || queries
            .iter()
            .any(|&query| query == b"base:" || query == BASE_ALLOCATION.as_bytes())
}

/// Whether `SET_META_CONTEXT` with `queries` selects `base:allocation` (the `base:`
/// wildcard selects nothing there, and no query selects nothing).
pub fn set_selects_base_allocation(queries: &[&[u8]]) -> bool {
    queries
        .iter()
        .any(|&query| query == BASE_ALLOCATION.as_bytes())
}

/// The namespace of a query: what precedes its first colon (`None` without one).
fn namespace(query: &[u8]) -> Option<&[u8]> {
    let colon = query.iter().position(|&byte| byte == b':')?;
    Some(&query[..colon])
}

fn take_u32(rest: &mut &[u8]) -> Option<u32> {
    let bytes = take(rest, 4)?;
    Some(u32::from_be_bytes(bytes.try_into().expect("4 bytes")))
}

/// The next `length` bytes, if that many are left.
fn take<'a>(rest: &mut &'a [u8], length: u32) -> Option<&'a [u8]> {
    let length = usize::try_from(length).ok()?;
    if rest.len() < length {
        return None;
    }
    let (taken, left) = rest.split_at(length);
    *rest = left;
    Some(taken)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn query() -> impl Strategy<Value = Vec<u8>> {
        ("[a-z]{1,8}", "[a-z:]{0,12}")
            .prop_map(|(space, leaf)| format!("{space}:{leaf}").into_bytes())
    }

    proptest! {
        /// Round trip: every well-formed request encodes and decodes to itself.
        #[test]
        fn requests_round_trip(name in proptest::collection::vec(any::<u8>(), 0..20), queries in proptest::collection::vec(query(), 0..6)) {
            let borrowed: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
            let bytes = encode_meta_context_request(&name, &borrowed);
            let decoded = decode_meta_context_request(&bytes).unwrap();
            prop_assert_eq!(decoded, MetaContextRequest { export_name: &name, queries: borrowed });
        }

        /// Arbitrary bytes never panic the decoder, and a request cut anywhere short
        /// of its end, or with a byte added, is refused.
        #[test]
        fn cut_or_padded_requests_are_refused(queries in proptest::collection::vec(query(), 0..4), cut in any::<usize>(), noise in proptest::collection::vec(any::<u8>(), 0..40)) {
            let borrowed: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
            let bytes = encode_meta_context_request(b"", &borrowed);
            prop_assert!(decode_meta_context_request(&bytes[..cut % bytes.len()]).is_err());
            let mut padded = bytes.clone();
            padded.push(0);
            prop_assert!(decode_meta_context_request(&padded).is_err());
            let _ = decode_meta_context_request(&noise);
        }
    }

    /// Each malformed request is refused with the reason naming the field.
    #[test]
    fn the_decoder_names_what_it_refuses() {
        let refusal = |bytes: &[u8]| decode_meta_context_request(bytes).unwrap_err().to_string();
        assert_eq!(refusal(&[0, 0]), "export name length field missing");
        assert_eq!(
            refusal(&[0, 0, 0, 9, b'x']),
            "export name runs past the option data"
        );
        assert_eq!(refusal(&[0, 0, 0, 0, 0]), "query count field missing");
        assert_eq!(
            refusal(&[0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, b'a', b':']),
            "query 1: length field missing"
        );
        assert_eq!(
            refusal(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            "query 0: runs past the option data"
        );
        let no_colon = encode_meta_context_request(b"", &[b"base"]);
        assert_eq!(
            refusal(&no_colon),
            "query 0: does not start with a namespace and a colon"
        );
        let empty_namespace = encode_meta_context_request(b"", &[b":allocation"]);
        assert_eq!(
            refusal(&empty_namespace),
            "query 0: does not start with a namespace and a colon"
        );
        let long = vec![b'x'; MAX_STRING_BYTES + 1];
        let over = encode_meta_context_request(b"", &[&long]);
        assert_eq!(
            refusal(&over),
            "query 0: longer than the protocol's 4096-byte string limit"
        );
        let mut trailing = encode_meta_context_request(b"", &[]);
        trailing.extend_from_slice(b"zz");
        assert_eq!(refusal(&trailing), "2 bytes after the last query");
    }

    /// The query forms of the module doc's table.
    #[test]
    fn queries_match_as_the_protocol_says() {
        assert!(list_finds_base_allocation(&[]));
        assert!(list_finds_base_allocation(&[b"base:"]));
        assert!(list_finds_base_allocation(&[b"qemu:x", b"base:allocation"]));
        assert!(!list_finds_base_allocation(&[b"base:other", b"qemu:"]));
        assert!(!set_selects_base_allocation(&[]));
        assert!(!set_selects_base_allocation(&[b"base:"]));
        assert!(set_selects_base_allocation(&[b"base:allocation"]));
        assert!(!set_selects_base_allocation(&[b"x-y:allocation"]));
    }
}
