// A rechunk's new chunk assembled from its pieces where they lie: each held
// piece is copied straight from the buffer's memory (a spilled one read
// from its file without coming back into memory, and let go once copied),
// so no piece is copied out to JS first.

use super::SpillBuffer;
use crate::chunk::rechunk::{assemble_into, Region};
use crate::error::Result;

/// Where a piece's bytes are: a key of this buffer, or bytes the caller holds.
pub enum PieceBytes<'a> {
    Key(&'a str),
    Bytes(&'a [u8]),
}

impl SpillBuffer {
    /// The bytes of `out_box` made from `pieces`; `None` when a keyed piece
    /// is not held (nothing is handed out then).
    pub fn assemble(&self, out_box: &Region, item: usize, pieces: &[(Region, PieceBytes<'_>)]) -> Result<Option<Vec<u8>>> {
        let mut out = crate::pool::take_empty(out_box.len() * item);
        out.resize(out_box.len() * item, 0);
        for (r, p) in pieces {
            match p {
                PieceBytes::Bytes(b) => assemble_into(&mut out, out_box, item, &[(r, b)])?,
                PieceBytes::Key(k) => match self.peek(k)? {
                    Some(d) => assemble_into(&mut out, out_box, item, &[(r, d.as_slice())])?,
                    None => {
                        crate::pool::give(out);
                        return Ok(None);
                    }
                },
            }
        }
        Ok(Some(out))
    }
}
