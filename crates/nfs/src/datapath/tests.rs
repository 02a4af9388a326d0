use super::{part_key, tag, untag};

#[test]
fn tags_carry_slot_part_session_slot_and_channel() {
    let t = tag(65535, 300, 1023, 0x8000 + 7);
    assert_eq!(untag(t), (65535, 300, 1023, 0x8000 + 7));
    // Re-sends of a part keep their key whatever slot and channel they use.
    assert_eq!(part_key(t), part_key(tag(65535, 300, 5, 2)));
    assert_ne!(part_key(t), part_key(tag(65535, 301, 1023, 0x8000 + 7)));
    assert_ne!(part_key(t), part_key(tag(65534, 300, 1023, 0x8000 + 7)));
}
