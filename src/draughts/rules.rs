//! Rule sets as orthogonal flags, with named presets for the major 8x8 variants.
//!
//! Every preset is a plain [`Rules`] value; nothing in the move generator asks "which variant is
//! this", only which flag is set, so a house rule is one changed field.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::position::Color;

/// What happens when a man reaches the far row in the middle of a capture sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PromotionInCapture {
    /// Pool, Brazilian: if it can capture on (as a man) it must, and is not crowned; it is crowned
    /// only where the sequence ends on the far row.
    ContinueAsMan,
    /// Russian: crowned at once, and continues capturing as a king.
    CrownAndContinue,
    /// English, Italian, Spanish, Czech: crowned, and the move ends there.
    CrownAndStop,
}

/// Which captures are allowed when several exist (capturing itself is always compulsory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturePrecedence {
    /// Only sequences taking the most pieces are legal (majority rule).
    pub majority: bool,
    /// Among the longest, a king must capture rather than a man (Italian).
    pub prefer_king_capturer: bool,
    /// Among those, the sequence taking the most kings (Italian, Spanish).
    pub most_kings: bool,
    /// Among those, the sequence meeting a king earliest (Italian).
    pub earliest_king: bool,
    /// A capture by a king takes precedence over any capture by a man (Czech).
    pub king_first: bool,
}

impl CapturePrecedence {
    pub const FREE: CapturePrecedence = CapturePrecedence {
        majority: false,
        prefer_king_capturer: false,
        most_kings: false,
        earliest_king: false,
        king_first: false,
    };
}

/// How squares are written in move text and FEN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SquareNotation {
    /// 1-32, counted along the rows from the top-left playing square, Black's side on 1-12.
    Numeric,
    /// a1-h8, a1 at White's bottom-left.
    Algebraic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    pub variant: Variant,
    pub men_capture_backwards: bool,
    pub flying_kings: bool,
    /// Italian: a man may not jump a king.
    pub men_capture_kings: bool,
    pub precedence: CapturePrecedence,
    pub promotion_in_capture: PromotionInCapture,
    pub first_mover: Color,
    pub notation: SquareNotation,
    /// The board seen in a mirror: the bottom-left corner is a light square (Italian, Spanish).
    /// Internally positions always use the standard geometry; only square names change.
    pub mirrored: bool,
    /// The capture separator written in move text: `x`, or `:` for Russian.
    pub capture_separator: char,
}

/// The named presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Pool,
    Brazilian,
    Russian,
    English,
    Italian,
    Spanish,
    Czech,
}

impl Variant {
    pub const ALL: [Variant; 7] = [
        Variant::Pool,
        Variant::Brazilian,
        Variant::Russian,
        Variant::English,
        Variant::Italian,
        Variant::Spanish,
        Variant::Czech,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Pool => "pool",
            Variant::Brazilian => "brazilian",
            Variant::Russian => "russian",
            Variant::English => "english",
            Variant::Italian => "italian",
            Variant::Spanish => "spanish",
            Variant::Czech => "czech",
        }
    }

    /// The game's name for people: "English checkers", "Russian draughts"...
    pub fn full_name(self) -> &'static str {
        match self {
            Variant::Pool => "pool checkers",
            Variant::Brazilian => "Brazilian draughts",
            Variant::Russian => "Russian draughts",
            Variant::English => "English checkers",
            Variant::Italian => "Italian draughts",
            Variant::Spanish => "Spanish draughts",
            Variant::Czech => "Czech draughts",
        }
    }

    /// The PDN `GameType` number.
    pub fn game_type(self) -> u32 {
        match self {
            Variant::English => 21,
            Variant::Italian => 22,
            Variant::Pool => 23,
            Variant::Spanish => 24,
            Variant::Russian => 25,
            Variant::Brazilian => 26,
            Variant::Czech => 29,
        }
    }

    /// The variant of a PDN `GameType` tag value (`"21"` or `"21,B,8,8,N1,0"`); `None` for
    /// games this engine does not play (10x10 boards, Frisian, ...).
    pub fn from_game_type(tag: &str) -> Option<Variant> {
        let number: u32 = tag.split(',').next()?.trim().parse().ok()?;
        Variant::ALL.into_iter().find(|v| v.game_type() == number)
    }

    pub fn rules(self) -> Rules {
        let base = Rules {
            variant: self,
            men_capture_backwards: true,
            flying_kings: true,
            men_capture_kings: true,
            precedence: CapturePrecedence::FREE,
            promotion_in_capture: PromotionInCapture::ContinueAsMan,
            first_mover: Color::White,
            notation: SquareNotation::Algebraic,
            mirrored: false,
            capture_separator: 'x',
        };
        match self {
            Variant::Pool => Rules {
                first_mover: Color::Black,
                notation: SquareNotation::Numeric,
                ..base
            },
            Variant::Russian => Rules {
                promotion_in_capture: PromotionInCapture::CrownAndContinue,
                capture_separator: ':',
                ..base
            },
            Variant::Brazilian => Rules {
                precedence: CapturePrecedence { majority: true, ..CapturePrecedence::FREE },
                ..base
            },
            Variant::English => Rules {
                men_capture_backwards: false,
                flying_kings: false,
                promotion_in_capture: PromotionInCapture::CrownAndStop,
                first_mover: Color::Black,
                notation: SquareNotation::Numeric,
                ..base
            },
            Variant::Italian => Rules {
                men_capture_backwards: false,
                flying_kings: false,
                men_capture_kings: false,
                precedence: CapturePrecedence {
                    majority: true,
                    prefer_king_capturer: true,
                    most_kings: true,
                    earliest_king: true,
                    king_first: false,
                },
                promotion_in_capture: PromotionInCapture::CrownAndStop,
                notation: SquareNotation::Numeric,
                mirrored: true,
                ..base
            },
            Variant::Spanish => Rules {
                men_capture_backwards: false,
                precedence: CapturePrecedence {
                    majority: true,
                    most_kings: true,
                    ..CapturePrecedence::FREE
                },
                promotion_in_capture: PromotionInCapture::CrownAndStop,
                notation: SquareNotation::Numeric,
                mirrored: true,
                ..base
            },
            Variant::Czech => Rules {
                men_capture_backwards: false,
                precedence: CapturePrecedence { king_first: true, ..CapturePrecedence::FREE },
                promotion_in_capture: PromotionInCapture::CrownAndStop,
                ..base
            },
        }
    }
}

impl Default for Variant {
    /// The rules of the seed's student project: American pool checkers.
    fn default() -> Self {
        Variant::Pool
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown variant `{0}` (expected one of: pool, brazilian, russian, english, italian, spanish, czech)")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let found = match lower.as_str() {
            "american" | "checkers" => Some(Variant::English),
            "polish" => Some(Variant::Brazilian),
            _ => Variant::ALL.into_iter().find(|v| v.name() == lower),
        };
        found.ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

impl Default for Rules {
    fn default() -> Self {
        Variant::Pool.rules()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_types_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::from_game_type(&v.game_type().to_string()), Some(v));
        }
        assert_eq!(Variant::from_game_type("21,B,8,8,N1,0"), Some(Variant::English));
        assert_eq!(Variant::from_game_type("20"), None);
    }

    #[test]
    fn names_parse() {
        for v in Variant::ALL {
            assert_eq!(v.name().parse::<Variant>().unwrap(), v);
        }
        assert!("chess".parse::<Variant>().is_err());
    }
}
