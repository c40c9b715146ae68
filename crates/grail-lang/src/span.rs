//! Source positions: byte spans tagged with a file, and the map from file ids to names and texts
//! that turns them into lines and columns.

use std::fmt;
use std::ops::Range;

/// Which file of a [`SourceMap`] a span points into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A half-open byte range `start..end` in one file. Every AST node carries one, so later stages
/// can point their diagnostics at source text.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        // Files are capped well below 4 GiB by `SourceMap::add`; saturate rather than wrap anyway.
        let clamp = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        Span { file, start: clamp(start), end: clamp(end.max(start)) }
    }

    /// The smallest span covering both (they must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span { file: self.file, start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// The empty span just after this one: where a missing token would go.
    pub fn after(self) -> Span {
        Span { file: self.file, start: self.end, end: self.end }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Span({}:{}..{})", self.file.0, self.start, self.end)
    }
}

/// One source file: its display name, text and line starts.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    fn new(name: String, text: String) -> SourceFile {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { name, text, line_starts }
    }

    /// 0-based index of the line holding `byte`.
    pub fn line_index(&self, byte: usize) -> usize {
        match self.line_starts.binary_search(&byte) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte range of a 0-based line, without its newline.
    pub fn line_range(&self, line: usize) -> Option<Range<usize>> {
        let start = *self.line_starts.get(line)?;
        let end = self.line_starts.get(line + 1).map_or(self.text.len(), |&next| next - 1);
        Some(start..end.max(start))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let byte = byte.min(self.text.len());
        let line = self.line_index(byte);
        let start = self.line_starts[line];
        let column = self.text.get(start..byte).map_or(byte - start, |s| s.chars().count());
        (line + 1, column + 1)
    }
}

/// The files of one compilation, by [`FileId`].
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id. Spans are `u32` offsets, so a text is cut at 4 GiB.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let mut text = text.into();
        if text.len() > u32::MAX as usize {
            let mut cut = u32::MAX as usize;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        self.files.push(SourceFile::new(name.into(), text));
        FileId(u32::try_from(self.files.len() - 1).expect("fewer than 2^32 files"))
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    pub fn name(&self, id: FileId) -> &str {
        self.get(id).map_or("<unknown>", |f| &f.name)
    }

    /// Replaces a file's text (its name and id stay), as a diagnostic's view of a shortened line.
    pub(crate) fn replace_text(&mut self, id: FileId, text: String) {
        if let Some(file) = self.files.get_mut(id.0 as usize) {
            *file = SourceFile::new(std::mem::take(&mut file.name), text);
        }
    }

    pub fn text(&self, id: FileId) -> &str {
        self.get(id).map_or("", |f| &f.text)
    }

    /// 1-based line and column of a span's start.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        self.get(span.file).map_or((1, 1), |f| f.line_col(span.start as usize))
    }
}

impl<'a> codespan_reporting::files::Files<'a> for SourceMap {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, codespan_reporting::files::Error> {
        self.get(id).map(|f| f.name.as_str()).ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, codespan_reporting::files::Error> {
        self.get(id).map(|f| f.text.as_str()).ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        let file = self.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        Ok(file.line_index(byte_index.min(file.text.len())))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, codespan_reporting::files::Error> {
        let file = self.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        // codespan asks for the line after the last one; answer with an empty range at the end.
        let range = file.line_range(line_index).unwrap_or(file.text.len()..file.text.len());
        // codespan wants the newline included for its own column arithmetic to stay in range.
        let end = if range.end < file.text.len() { range.end + 1 } else { range.end };
        Ok(range.start..end)
    }
}
