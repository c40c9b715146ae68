//! Diagnostics: what went wrong, where, and how to show it.
//!
//! Rendering is done by `codespan-reporting` (the crate the naga shader translator uses for the
//! same job): it draws the source line and the underline. grail puts a
//! `path:line:col: severity: message` line first so the location reads like a compiler's.

use std::io::{self, IsTerminal, Write};

use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::termcolor::{Buffer, Color, ColorChoice, ColorSpec, StandardStream, WriteColor};
use codespan_reporting::term::{self, Chars, Config};

use std::ops::Range;

use crate::span::{FileId, SourceMap, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One message about the source: a primary span (where the caret goes), optional secondary
/// labelled spans, and free-form notes printed after the snippet.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub primary: Span,
    pub labels: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, primary: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            primary,
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(message: impl Into<String>, primary: Span) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(message, primary) }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push((span, message.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    fn to_codespan(&self) -> cs::Diagnostic<crate::span::FileId> {
        let severity = match self.severity {
            Severity::Note => cs::Severity::Note,
            Severity::Warning => cs::Severity::Warning,
            Severity::Error => cs::Severity::Error,
        };
        let mut labels = vec![cs::Label::primary(self.primary.file, self.primary.range())];
        labels.extend(
            self.labels.iter().map(|(span, text)| cs::Label::secondary(span.file, span.range()).with_message(text)),
        );
        cs::Diagnostic::new(severity).with_message(&self.message).with_labels(labels).with_notes(self.notes.clone())
    }
}

/// True if any diagnostic is an error.
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// Renders diagnostics to a colour-capable writer: for each, `path:line:col: error: message`,
/// then the source line with the span underlined, then labels and notes.
pub fn render(diagnostics: &[Diagnostic], files: &SourceMap, out: &mut dyn WriteColor) -> io::Result<()> {
    let config = Config { chars: Chars::ascii(), ..Config::default() };
    for diagnostic in diagnostics {
        let (line, column) = files.line_col(diagnostic.primary);
        write!(out, "{}:{line}:{column}: ", files.name(diagnostic.primary.file))?;
        let colour = match diagnostic.severity {
            Severity::Error => Color::Red,
            Severity::Warning => Color::Yellow,
            Severity::Note => Color::Green,
        };
        out.set_color(ColorSpec::new().set_fg(Some(colour)).set_bold(true))?;
        write!(out, "{}", diagnostic.severity.word())?;
        out.set_color(ColorSpec::new().set_bold(true))?;
        writeln!(out, ": {}", diagnostic.message)?;
        out.reset()?;
        // codespan's rich view starts with its own `error: message` line; the line above replaces it.
        let mut snippet = if out.supports_color() { Buffer::ansi() } else { Buffer::no_color() };
        // A line too long to read (a generated or minified program) is shown as a window around
        // what the diagnostic points at.
        let shortened = shorten_long_lines(diagnostic, files);
        let (view, shown) = shortened.as_ref().map_or((files, diagnostic), |(view, shown)| (view, shown));
        term::emit_to_write_style(&mut snippet, &config, view, &shown.to_codespan())
            .map_err(|e| io::Error::other(e.to_string()))?;
        let mut bytes = snippet.into_inner();
        if let Some((view, shown)) = &shortened {
            // codespan's `--> file:line:column` counts columns in the shortened line.
            let (line, shown_column) = view.line_col(shown.primary);
            let name = files.name(diagnostic.primary.file);
            let wrong = format!("{name}:{line}:{shown_column}");
            let right = format!("{name}:{line}:{column}");
            bytes = String::from_utf8_lossy(&bytes).replacen(&wrong, &right, 1).into_bytes();
        }
        let body = bytes.iter().position(|&b| b == b'\n').map_or(&bytes[..0], |newline| &bytes[newline + 1..]);
        out.write_all(body)?;
    }
    Ok(())
}

/// Lines longer than this many characters are shown as a window of about this width.
const LONG_LINE: usize = 160;

/// Where a diagnostic points into a line longer than [`LONG_LINE`], a copy of the files with each
/// such line cut to a window (`...` either side) around the spans on it, and the diagnostic with
/// its spans moved to match; `None` when every line it shows is short. Line numbers stay: only
/// the long lines' texts change.
fn shorten_long_lines(diagnostic: &Diagnostic, files: &SourceMap) -> Option<(SourceMap, Diagnostic)> {
    let spans: Vec<Span> =
        std::iter::once(diagnostic.primary).chain(diagnostic.labels.iter().map(|(s, _)| *s)).collect();
    // Per file, the long lines touched and the byte range of the spans' ends on each.
    let mut cuts: Vec<(FileId, usize, Range<usize>)> = Vec::new();
    for span in &spans {
        let Some(file) = files.get(span.file) else { continue };
        for byte in [span.start as usize, span.end as usize] {
            let byte = byte.min(file.text.len());
            let line = file.line_index(byte);
            let Some(range) = file.line_range(line) else { continue };
            if file.text[range.clone()].chars().count() <= LONG_LINE {
                continue;
            }
            match cuts.iter_mut().find(|(f, l, _)| *f == span.file && *l == line) {
                Some((_, _, seen)) => *seen = seen.start.min(byte)..seen.end.max(byte),
                None => cuts.push((span.file, line, byte..byte)),
            }
        }
    }
    if cuts.is_empty() {
        return None;
    }
    let mut view = files.clone();
    let mut shown = diagnostic.clone();
    cuts.sort_by_key(|(file, line, _)| (*file, std::cmp::Reverse(*line)));
    // Last line first, so that the offsets of the lines before stay as they were.
    for (file_id, line, seen) in cuts {
        let file = view.get(file_id).expect("the file was found above");
        let range = file.line_range(line).expect("the line was found above");
        let text = &file.text;
        let window = window_around(text, range.clone(), seen);
        let (prefix, suffix) =
            (if window.start > range.start { "..." } else { "" }, if window.end < range.end { "..." } else { "" });
        let replacement = format!("{prefix}{}{suffix}", &text[window.clone()]);
        let removed = range.len() as i64 - replacement.len() as i64;
        let moved = |byte: u32| -> u32 {
            let byte = byte as usize;
            if byte < range.start {
                byte as u32
            } else if byte > range.end {
                (byte as i64 - removed) as u32
            } else {
                let inside = byte.clamp(window.start, window.end) - window.start;
                (range.start + prefix.len() + inside) as u32
            }
        };
        let mut new_text = String::with_capacity(text.len() - removed.max(0) as usize);
        new_text.push_str(&text[..range.start]);
        new_text.push_str(&replacement);
        new_text.push_str(&text[range.end..]);
        view.replace_text(file_id, new_text);
        let shift = |span: &mut Span| {
            if span.file == file_id {
                span.start = moved(span.start);
                span.end = moved(span.end).max(span.start);
            }
        };
        shift(&mut shown.primary);
        for (span, _) in &mut shown.labels {
            shift(span);
        }
    }
    Some((view, shown))
}

/// The part of `line` (a byte range of `text`) to show: [`LONG_LINE`] characters or so around
/// `seen` (the bytes the diagnostic points at), on character boundaries; the start of what is
/// seen when it is wider than that.
fn window_around(text: &str, line: Range<usize>, seen: Range<usize>) -> Range<usize> {
    let chars: Vec<usize> = text[line.clone()].char_indices().map(|(i, _)| line.start + i).chain([line.end]).collect();
    let at = |byte: usize| chars.partition_point(|&b| b < byte);
    let (first, last) = (at(seen.start), at(seen.end));
    let margin = LONG_LINE.saturating_sub(last - first) / 2;
    let start = first.saturating_sub(margin.max(LONG_LINE / 8));
    let end = (start + LONG_LINE).min(chars.len() - 1);
    chars[start]..chars[end]
}

/// Renders without colour into a string (tests, logs).
pub fn render_to_string(diagnostics: &[Diagnostic], files: &SourceMap) -> String {
    let mut buffer = Buffer::no_color();
    render(diagnostics, files, &mut buffer).expect("writing to memory cannot fail");
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

/// Renders to standard error, in colour only when it is a terminal.
pub fn emit_to_stderr(diagnostics: &[Diagnostic], files: &SourceMap) -> io::Result<()> {
    let choice = if io::stderr().is_terminal() { ColorChoice::Auto } else { ColorChoice::Never };
    let mut stream = StandardStream::stderr(choice);
    render(diagnostics, files, &mut stream)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(text: &str, at: Range<usize>) -> String {
        let mut files = SourceMap::new();
        let file = files.add("long.grail", text);
        let diagnostic = Diagnostic::error("unknown name `zz`", Span::new(file, at.start, at.end));
        render_to_string(&[diagnostic], &files)
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_span() {
        let mut text = String::from("fn main() -> u32 {\n    let a = ");
        text.push_str(&"1 + ".repeat(5_000));
        let at = text.len();
        text.push_str("zz;\n    return a;\n}\n");
        let out = rendered(&text, at..at + 2);
        assert!(out.starts_with("long.grail:2:20013: error: unknown name `zz`"), "{out}");
        assert!(out.lines().all(|line| line.chars().count() < 2 * LONG_LINE), "{out}");
        let source = out.lines().find(|line| line.contains("zz;")).expect("the window shows the span");
        assert!(source.contains("| ...") && source.contains(" + 1 + 1 + "), "{source}");
        // The caret sits under `zz`.
        let caret = out.lines().find(|line| line.contains('^')).expect("a caret line");
        assert_eq!(caret.find('^'), source.find("zz"), "{out}");
        assert!(out.contains("--> long.grail:2:20013"), "{out}");
    }

    #[test]
    fn short_lines_are_shown_whole() {
        let text = "fn main() -> u32 {\n    return zz;\n}\n";
        let out = rendered(text, 30..32);
        assert!(out.contains("    return zz;"), "{out}");
        assert!(!out.contains("..."), "{out}");
    }

    #[test]
    fn a_window_keeps_to_character_boundaries() {
        let mut text = String::from("// ");
        text.push_str(&"é".repeat(400));
        let at = text.len();
        text.push_str("zz ");
        text.push_str(&"ü".repeat(400));
        let out = rendered(&text, at..at + 2);
        assert!(out.contains("...ééé") && out.contains("zz üü") && out.contains("üü..."), "{out}");
    }
}
