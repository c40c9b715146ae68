//! Diagnostics: what went wrong, where, and how to show it.
//!
//! Rendering is done by `codespan-reporting` (the crate the naga shader translator uses for the
//! same job): it draws the source line and the underline. grail puts a
//! `path:line:col: severity: message` line first so the location reads like a compiler's.

use std::io::{self, IsTerminal, Write};

use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::termcolor::{Buffer, Color, ColorChoice, ColorSpec, StandardStream, WriteColor};
use codespan_reporting::term::{self, Chars, Config};

use crate::span::{SourceMap, Span};

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
        term::emit_to_write_style(&mut snippet, &config, files, &diagnostic.to_codespan())
            .map_err(|e| io::Error::other(e.to_string()))?;
        let bytes = snippet.into_inner();
        let body = bytes.iter().position(|&b| b == b'\n').map_or(&bytes[..0], |newline| &bytes[newline + 1..]);
        out.write_all(body)?;
    }
    Ok(())
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
