//! The few fields of an ELF64 file header an AppImage needs: where the runtime ends (its
//! section header table is the last thing in the file, so the image starts right after it)
//! and the AppImage type-2 magic in the header's padding bytes.

/// Bytes in an ELF64 file header.
pub const HEADER_LEN: usize = 64;

/// Where the AppImage magic sits: `e_ident[EI_ABIVERSION]` and the padding after it.
pub const MAGIC_OFFSET: usize = 8;

/// The AppImage type-2 magic: `A`, `I`, 2.
pub const TYPE2_MAGIC: [u8; 3] = *b"AI\x02";

/// An ELF64 file header, reduced to what locates the data appended after the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfHeader {
    /// `e_shoff`: where the section header table starts.
    pub section_headers_offset: u64,
    /// `e_shentsize`: bytes per section header.
    pub section_header_size: u16,
    /// `e_shnum`: how many section headers there are.
    pub section_header_count: u16,
    /// Whether bytes 8..11 hold [`TYPE2_MAGIC`].
    pub appimage_type2: bool,
}

impl ElfHeader {
    /// Reads the header at the start of `bytes`; `None` when they are not an ELF64 header.
    pub fn parse(bytes: &[u8]) -> Option<ElfHeader> {
        let header = bytes.get(..HEADER_LEN)?;
        if header[..4] != *b"\x7fELF" || header[4] != 2 {
            return None;
        }
        let big_endian = match header[5] {
            1 => false,
            2 => true,
            _ => return None,
        };
        let u16_at = |at: usize| {
            let raw = [header[at], header[at + 1]];
            if big_endian {
                u16::from_be_bytes(raw)
            } else {
                u16::from_le_bytes(raw)
            }
        };
        let u64_at = |at: usize| {
            let raw: [u8; 8] = header[at..at + 8].try_into().expect("8 bytes");
            if big_endian {
                u64::from_be_bytes(raw)
            } else {
                u64::from_le_bytes(raw)
            }
        };
        let parsed = ElfHeader {
            section_headers_offset: u64_at(0x28),
            section_header_size: u16_at(0x3A),
            section_header_count: u16_at(0x3C),
            appimage_type2: header[MAGIC_OFFSET..MAGIC_OFFSET + 3] == TYPE2_MAGIC,
        };
        parsed.checked_end().map(|_| parsed)
    }

    /// Where the ELF file ends and an appended image starts:
    /// `e_shoff + e_shentsize * e_shnum`.
    pub fn end(&self) -> u64 {
        self.checked_end()
            .expect("parse rejects headers whose end overflows")
    }

    fn checked_end(&self) -> Option<u64> {
        let table = u64::from(self.section_header_size) * u64::from(self.section_header_count);
        self.section_headers_offset.checked_add(table)
    }
}

/// Writes [`TYPE2_MAGIC`] into an ELF header, as the builder does to the runtime's copy.
pub fn mark_type2(header: &mut [u8]) {
    header[MAGIC_OFFSET..MAGIC_OFFSET + 3].copy_from_slice(&TYPE2_MAGIC);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn little_endian_header(shoff: u64, shentsize: u16, shnum: u16) -> Vec<u8> {
        let mut header = vec![0u8; HEADER_LEN];
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 2;
        header[5] = 1;
        header[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        header[0x3A..0x3C].copy_from_slice(&shentsize.to_le_bytes());
        header[0x3C..0x3E].copy_from_slice(&shnum.to_le_bytes());
        header
    }

    #[test]
    fn the_end_is_the_section_header_table_s_end() {
        let header = ElfHeader::parse(&little_endian_header(10_000, 64, 30)).unwrap();
        assert_eq!(header.end(), 10_000 + 64 * 30);
        assert!(!header.appimage_type2);
    }

    #[test]
    fn big_endian_fields_are_read_big_endian() {
        let mut header = vec![0u8; HEADER_LEN];
        header[..6].copy_from_slice(b"\x7fELF\x02\x02");
        header[0x28..0x30].copy_from_slice(&4096u64.to_be_bytes());
        header[0x3A..0x3C].copy_from_slice(&64u16.to_be_bytes());
        header[0x3C..0x3E].copy_from_slice(&2u16.to_be_bytes());
        assert_eq!(ElfHeader::parse(&header).unwrap().end(), 4096 + 128);
    }

    #[test]
    fn the_type2_magic_is_seen_once_marked() {
        let mut header = little_endian_header(1, 64, 1);
        mark_type2(&mut header);
        assert_eq!(&header[8..11], b"AI\x02");
        assert!(ElfHeader::parse(&header).unwrap().appimage_type2);
    }

    #[test]
    fn short_input_non_elf_and_32_bit_elf_are_refused() {
        let header = little_endian_header(1, 64, 1);
        assert_eq!(ElfHeader::parse(&header[..63]), None);
        assert_eq!(ElfHeader::parse(&[b'#'; 64]), None);
        let mut elf32 = header.clone();
        elf32[4] = 1;
        assert_eq!(ElfHeader::parse(&elf32), None);
        let mut no_endianness = header;
        no_endianness[5] = 0;
        assert_eq!(ElfHeader::parse(&no_endianness), None);
    }

    #[test]
    fn an_end_past_u64_is_refused() {
        assert_eq!(
            ElfHeader::parse(&little_endian_header(u64::MAX - 10, 64, 2)),
            None
        );
    }

    #[test]
    fn a_linked_program_ends_where_its_section_headers_end() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let header = ElfHeader::parse(&exe).unwrap();
        assert_eq!(header.end(), exe.len() as u64);
    }
}
