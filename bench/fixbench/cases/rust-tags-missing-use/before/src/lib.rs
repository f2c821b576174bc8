//! Tag index for the notes app: which notes carry which (normalised) tags.

mod index;
mod normalize;

pub use index::TagIndex;
pub use normalize::Normalizer;
