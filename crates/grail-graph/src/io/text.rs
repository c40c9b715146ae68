//! Shared machinery for text formats: parallel line-chunked parsing, fast integer parsing.

/// The first line that is neither blank nor a comment (starting with one of `comment_starts`).
pub(crate) fn first_data_line<'a>(bytes: &'a [u8], comment_starts: &[u8]) -> Option<&'a [u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|line| line.trim_ascii())
        .find(|line| !line.is_empty() && !comment_starts.contains(&line[0]))
}
