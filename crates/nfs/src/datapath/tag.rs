//! The tag of each RPC of a data path, 16 bits per field.

/// Tag of one RPC: slot, part of the slot's I/O, session slot (NFSv4.1: index in the
/// lease), channel it went on, 16 bits each.
pub(super) fn tag(slot: u32, part: u32, sslot: u16, ch: usize) -> u64 {
    u64::from(slot & 0xffff) << 48
        | u64::from(part & 0xffff) << 32
        | u64::from(sslot) << 16
        | (ch as u64 & 0xffff)
}

pub(super) fn untag(t: u64) -> (u32, u32, u16, usize) {
    (
        (t >> 48) as u32,
        (t >> 32 & 0xffff) as u32,
        (t >> 16 & 0xffff) as u16,
        (t & 0xffff) as usize,
    )
}

/// The key of an RPC across re-sends: its slot and part.
pub(super) fn part_key(t: u64) -> u64 {
    t & !0xffff_ffff
}
