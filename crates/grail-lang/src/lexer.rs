//! The lexer: source text to tokens. Errors become diagnostics and lexing goes on, so one run
//! reports every lexical problem; the token stream always ends with `Eof`.

use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};
use crate::token::{Base, FloatSuffix, IntSuffix, Keyword, Token, TokenKind};

/// Splits `source` into tokens (ending with `Eof`) and the diagnostics met on the way.
pub fn lex(source: &str, file: FileId) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lexer =
        Lexer { src: source, bytes: source.as_bytes(), pos: 0, file, tokens: Vec::new(), diags: Vec::new() };
    lexer.run();
    (lexer.tokens, lexer.diags)
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    file: FileId,
    tokens: Vec<Token>,
    diags: Vec<Diagnostic>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn span(&self, start: usize) -> Span {
        Span::new(self.file, start, self.pos)
    }

    fn error(&mut self, message: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(message, span));
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = self.span(start);
        self.tokens.push(Token { kind, span });
    }

    fn run(&mut self) {
        loop {
            self.skip_trivia();
            let start = self.pos;
            if self.pos >= self.bytes.len() {
                self.push(TokenKind::Eof, start);
                return;
            }
            let b = self.peek(0);
            if is_ident_start(b) {
                self.ident(start);
            } else if b.is_ascii_digit() {
                self.number(start);
            } else if b == b'"' {
                self.string(start);
            } else {
                self.punct(start);
            }
        }
    }

    /// Skips whitespace and comments; block comments nest.
    fn skip_trivia(&mut self) {
        loop {
            let b = self.peek(0);
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if b == b'/' && self.peek(1) == b'/' {
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else if b == b'/' && self.peek(1) == b'*' {
                let start = self.pos;
                self.pos += 2;
                let mut depth = 1usize;
                while depth > 0 {
                    if self.pos >= self.bytes.len() {
                        let span = Span::new(self.file, start, start + 2);
                        self.diags.push(
                            Diagnostic::error("unterminated block comment", span)
                                .with_note("block comments nest: every `/*` needs its own `*/`"),
                        );
                        return;
                    }
                    if self.peek(0) == b'/' && self.peek(1) == b'*' {
                        depth += 1;
                        self.pos += 2;
                    } else if self.peek(0) == b'*' && self.peek(1) == b'/' {
                        depth -= 1;
                        self.pos += 2;
                    } else {
                        self.pos += 1;
                    }
                }
            } else {
                return;
            }
        }
    }

    fn ident(&mut self, start: usize) {
        while is_ident_continue(self.peek(0)) {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        let kind = match Keyword::lookup(text) {
            Some(k) => TokenKind::Keyword(k),
            None => TokenKind::Ident(text.to_string()),
        };
        self.push(kind, start);
    }

    fn number(&mut self, start: usize) {
        let (base, radix) = match (self.peek(0), self.peek(1)) {
            (b'0', b'x' | b'X') => (Base::Hex, 16),
            (b'0', b'b' | b'B') => (Base::Binary, 2),
            _ => (Base::Decimal, 10),
        };
        if base != Base::Decimal {
            self.pos += 2;
        }
        let digits_start = self.pos;
        // Binary literals eat all decimal digits so that `0b102` is one bad literal, not two.
        let is_digit = |b: u8| match base {
            Base::Hex => b.is_ascii_hexdigit() || b == b'_',
            _ => b.is_ascii_digit() || b == b'_',
        };
        while is_digit(self.peek(0)) {
            self.pos += 1;
        }
        let mut is_float = false;
        if base == Base::Decimal {
            if self.peek(0) == b'.' && self.peek(1).is_ascii_digit() {
                is_float = true;
                self.pos += 1;
                while self.peek(0).is_ascii_digit() || self.peek(0) == b'_' {
                    self.pos += 1;
                }
            }
            let sign = usize::from(matches!(self.peek(1), b'+' | b'-'));
            if matches!(self.peek(0), b'e' | b'E') && self.peek(1 + sign).is_ascii_digit() {
                is_float = true;
                self.pos += 1 + sign;
                while self.peek(0).is_ascii_digit() || self.peek(0) == b'_' {
                    self.pos += 1;
                }
            }
        }
        let digits_end = self.pos;
        let suffix_start = self.pos;
        while is_ident_continue(self.peek(0)) {
            self.pos += 1;
        }
        let suffix = &self.src[suffix_start..self.pos];
        let suffix_span = self.span(suffix_start);
        let digits: String = self.src[digits_start..digits_end].chars().filter(|&c| c != '_').collect();
        let whole = self.span(start);

        let float_suffix = match suffix {
            "f32" => Some(FloatSuffix::F32),
            "f64" => Some(FloatSuffix::F64),
            _ => None,
        };
        if (is_float || float_suffix.is_some()) && base == Base::Decimal {
            if float_suffix.is_none() && !suffix.is_empty() {
                self.error(
                    format!("invalid suffix `{suffix}` for a float literal (expected `f32` or `f64`)"),
                    suffix_span,
                );
            }
            let value = digits.parse::<f64>().unwrap_or(0.0);
            let value = if value.is_finite() {
                value
            } else {
                self.error("float literal is out of range", whole);
                0.0
            };
            self.push(TokenKind::Float { value, suffix: float_suffix }, start);
            return;
        }
        let suffix = match suffix {
            "" => None,
            "i32" => Some(IntSuffix::I32),
            "i64" => Some(IntSuffix::I64),
            "u32" => Some(IntSuffix::U32),
            "u64" => Some(IntSuffix::U64),
            other => {
                let message = if base == Base::Binary && other.starts_with(|c: char| c.is_ascii_digit()) {
                    "invalid digit in a binary literal".to_string()
                } else {
                    format!("invalid suffix `{other}` for an integer literal (expected `i32`, `i64`, `u32` or `u64`)")
                };
                self.error(message, suffix_span);
                None
            }
        };
        if base == Base::Binary && digits.bytes().any(|b| b > b'1') {
            self.error("invalid digit in a binary literal", whole);
            self.push(TokenKind::Int { value: 0, base, suffix }, start);
            return;
        }
        if digits.is_empty() {
            self.error("integer literal has no digits", whole);
            self.push(TokenKind::Int { value: 0, base, suffix }, start);
            return;
        }
        let value = match u64::from_str_radix(&digits, radix) {
            Ok(value) => value,
            Err(_) => {
                self.error("integer literal is too large for u64", whole);
                0
            }
        };
        self.push(TokenKind::Int { value, base, suffix }, start);
    }

    fn string(&mut self, start: usize) {
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.src[self.pos..].chars().next() else {
                self.error("unterminated string literal", Span::new(self.file, start, start + 1));
                break;
            };
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let escape_start = self.pos - 1;
                    let Some(e) = self.src[self.pos..].chars().next() else { continue };
                    self.pos += e.len_utf8();
                    match e {
                        'n' => value.push('\n'),
                        't' => value.push('\t'),
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        other => {
                            let span = self.span(escape_start);
                            self.error(
                                format!("unknown escape `\\{other}` (expected `\\n`, `\\t`, `\\\\` or `\\\"`)"),
                                span,
                            );
                        }
                    }
                }
                c => value.push(c),
            }
        }
        self.push(TokenKind::Str(value), start);
    }

    fn punct(&mut self, start: usize) {
        use TokenKind::*;
        let (kind, len) = match (self.peek(0), self.peek(1)) {
            (b'.', b'.') => (DotDot, 2),
            (b'-', b'>') => (Arrow, 2),
            (b'+', b'=') => (PlusEq, 2),
            (b'-', b'=') => (MinusEq, 2),
            (b'*', b'=') => (StarEq, 2),
            (b'/', b'=') => (SlashEq, 2),
            (b'=', b'=') => (EqEq, 2),
            (b'!', b'=') => (NotEq, 2),
            (b'<', b'=') => (Le, 2),
            (b'>', b'=') => (Ge, 2),
            (b'<', b'<') => (Shl, 2),
            (b'>', b'>') => (Shr, 2),
            (b'&', b'&') => (AndAnd, 2),
            (b'|', b'|') => (OrOr, 2),
            (b'{', _) => (LBrace, 1),
            (b'}', _) => (RBrace, 1),
            (b'(', _) => (LParen, 1),
            (b')', _) => (RParen, 1),
            (b'[', _) => (LBracket, 1),
            (b']', _) => (RBracket, 1),
            (b',', _) => (Comma, 1),
            (b';', _) => (Semi, 1),
            (b':', _) => (Colon, 1),
            (b'.', _) => (Dot, 1),
            (b'=', _) => (Eq, 1),
            (b'<', _) => (Lt, 1),
            (b'>', _) => (Gt, 1),
            (b'+', _) => (Plus, 1),
            (b'-', _) => (Minus, 1),
            (b'*', _) => (Star, 1),
            (b'/', _) => (Slash, 1),
            (b'%', _) => (Percent, 1),
            (b'!', _) => (Bang, 1),
            (b'&', _) => (And, 1),
            (b'|', _) => (Or, 1),
            (b'^', _) => (Caret, 1),
            _ => {
                let c = self.src[self.pos..].chars().next().unwrap_or('\u{fffd}');
                self.pos += c.len_utf8().max(1);
                let span = self.span(start);
                self.error(format!("unexpected character `{}`", c.escape_debug()), span);
                return;
            }
        };
        self.pos += len;
        self.push(kind, start);
    }
}
