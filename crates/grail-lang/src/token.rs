//! Tokens: what the lexer hands the parser.

use std::fmt;

use crate::span::Span;

/// The written base of an integer literal, kept so the printer writes masks back in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    Decimal,
    Hex,
    Binary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntSuffix {
    I32,
    I64,
    U32,
    U64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatSuffix {
    F32,
    F64,
}

impl IntSuffix {
    pub fn as_str(self) -> &'static str {
        match self {
            IntSuffix::I32 => "i32",
            IntSuffix::I64 => "i64",
            IntSuffix::U32 => "u32",
            IntSuffix::U64 => "u64",
        }
    }
}

impl FloatSuffix {
    pub fn as_str(self) -> &'static str {
        match self {
            FloatSuffix::F32 => "f32",
            FloatSuffix::F64 => "f64",
        }
    }
}

macro_rules! keywords {
    ($($variant:ident => $text:literal,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Keyword { $($variant,)* }

        impl Keyword {
            pub fn lookup(text: &str) -> Option<Keyword> {
                match text { $($text => Some(Keyword::$variant),)* _ => None }
            }

            pub fn as_str(self) -> &'static str {
                match self { $(Keyword::$variant => $text,)* }
            }
        }
    };
}

keywords! {
    Graph => "graph", Node => "node", Edge => "edge", Set => "set", Collection => "collection",
    Param => "param", Output => "output", Input => "input", Const => "const", Struct => "struct", Fn => "fn",
    Kernel => "kernel", Let => "let", Mut => "mut", If => "if", Else => "else", While => "while",
    For => "for", Forall => "forall", In => "in", Where => "where", Break => "break",
    Continue => "continue", Return => "return", Push => "push", Retry => "retry",
    Iterate => "iterate", Pipe => "pipe", Once => "once", Invoke => "invoke", Initial => "initial",
    Until => "until", Atomic => "atomic", Exclusive => "exclusive", Single => "single",
    Reduce => "reduce", True => "true", False => "false", As => "as", Worklist => "worklist",
    Inf => "INF", G => "G",
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    Ident(String),
    Keyword(Keyword),
    Int { value: u64, base: Base, suffix: Option<IntSuffix> },
    Float { value: f64, suffix: Option<FloatSuffix> },
    Str(String),
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    Dot,
    DotDot,
    Arrow,
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    AndAnd,
    OrOr,
    And,
    Or,
    Caret,
    Shl,
    Shr,
    Eof,
}

impl TokenKind {
    /// The exact text of fixed tokens; `None` for identifiers and literals.
    pub fn fixed_text(&self) -> Option<&'static str> {
        use TokenKind::*;
        Some(match self {
            Keyword(k) => k.as_str(),
            LBrace => "{",
            RBrace => "}",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Dot => ".",
            DotDot => "..",
            Arrow => "->",
            Eq => "=",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            EqEq => "==",
            NotEq => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Bang => "!",
            AndAnd => "&&",
            OrOr => "||",
            And => "&",
            Or => "|",
            Caret => "^",
            Shl => "<<",
            Shr => ">>",
            Ident(_) | Int { .. } | Float { .. } | Str(_) | Eof => return None,
        })
    }
}

/// How a token is named in "expected X, found Y" messages.
impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(name) => write!(f, "identifier `{name}`"),
            TokenKind::Keyword(k) => write!(f, "keyword `{}`", k.as_str()),
            TokenKind::Int { .. } => write!(f, "integer literal"),
            TokenKind::Float { .. } => write!(f, "float literal"),
            TokenKind::Str(_) => write!(f, "string literal"),
            TokenKind::Eof => write!(f, "end of file"),
            other => write!(f, "`{}`", other.fixed_text().unwrap_or("?")),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}
