//! The request and reply of every loadfile operation (netbench.md §15.2, `sockio.c` of the
//! socket backend): sizes include the 4-byte length header; paths count with the length L of
//! the client's rewritten path.

use crate::dbench::loadfile::{Line, Loadfile, OpKind, NO_PATH};

/// One `do_packets(send, recv)`: request bytes (header included) and reply bytes (header
/// included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub req: u32,
    pub rep: u32,
}

/// The exchange of a line whose paths have the lengths `l` (0 where the line has none), or
/// `None` for the lines without one (`Deltree`, `Sleep`). Table of §15.2.
pub fn exchange(line: &Line, l: [u32; 2]) -> Option<Exchange> {
    let (req, rep) = match line.kind {
        OpKind::NTCreateX => (70 + 2 + 2 * l[0] + 2, 39 + 48),
        OpKind::Close => (47, 39),
        OpKind::Rename => (47 + 2 * l[0] + 2 * l[1], 39),
        OpKind::Unlink | OpKind::Mkdir | OpKind::Rmdir => (39 + 2 + 2 * l[0] + 2, 39),
        OpKind::Qpathinfo => (55 + 2 * l[0], 71),
        OpKind::Qfileinfo | OpKind::Qfsinfo => (59, 71),
        OpKind::Sfileinfo => (71, 47),
        OpKind::Find => (59 + 2 * l[0], 39 + 90 * line.count),
        OpKind::WriteX => (59 + line.size, 55),
        OpKind::ReadX => (59, 59 + line.ret_size),
        OpKind::LockX | OpKind::UnlockX => (51, 39),
        OpKind::Flush => (41, 39),
        OpKind::Deltree | OpKind::Sleep => return None,
    };
    Some(Exchange { req, rep })
}

/// Bytes a line counts toward the throughput: `WriteX` the size written, `ReadX` the size
/// returned (§15.1).
pub fn counted(line: &Line) -> u64 {
    match line.kind {
        OpKind::WriteX => line.size as u64,
        OpKind::ReadX => line.ret_size as u64,
        _ => 0,
    }
}

/// The length of a path as client `id` sends it: the client directory prefixed and every
/// `client1` replaced by `client<id>` (`child.c`; §15.2).
pub fn path_len(text: &str, dir: &str, id: u32) -> u32 {
    let full = format!("{dir}{text}");
    full.replace("client1", &format!("client{id}")).len() as u32
}

/// The exchanges of every line of `lf` for client `id` (`None` for lines without one).
pub fn exchanges(lf: &Loadfile, dir: &str, id: u32) -> Vec<Option<Exchange>> {
    let lens: Vec<u32> = lf.paths.iter().map(|p| path_len(p, dir, id)).collect();
    lf.lines
        .iter()
        .map(|line| {
            let l = line
                .path
                .map(|p| if p == NO_PATH { 0 } else { lens[p as usize] });
            exchange(line, l)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbench::loadfile;

    #[test]
    fn sizes_per_operation_follow_the_table_of_15_2() {
        // a loadfile with one line of each kind; the path "/a/b" with the directory "." is
        // "./a/b", L = 5; Rename's second path "./a/cd", L = 6
        let text = "\
NTCreateX \"\\a\\b\" 0x0 1 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
Rename \"\\a\\b\" \"\\a\\cd\" NT_STATUS_OK
Unlink \"\\a\\b\" 0x6 NT_STATUS_OK
Mkdir \"\\a\\b\" NT_STATUS_OK
Rmdir \"\\a\\b\" NT_STATUS_OK
Deltree \"\\a\\b\" NT_STATUS_OK
QUERY_PATH_INFORMATION \"\\a\\b\" 1004 NT_STATUS_OK
NTCreateX \"\\a\\b\" 0x0 1 2 NT_STATUS_OK
QUERY_FILE_INFORMATION 2 1004 NT_STATUS_OK
QUERY_FS_INFORMATION 1004 NT_STATUS_OK
SET_FILE_INFORMATION 2 1004 NT_STATUS_OK
FIND_FIRST \"\\a\\b\" 260 1366 11 NT_STATUS_OK
WriteX 2 0 1000 1000 NT_STATUS_OK
ReadX 2 0 4096 4000 NT_STATUS_OK
LockX 2 0 1 NT_STATUS_OK
UnlockX 2 0 1 NT_STATUS_OK
Flush 2 NT_STATUS_OK
Sleep 10 NT_STATUS_OK
";
        let lf = loadfile::parse("all.txt", text).unwrap();
        let ex = exchanges(&lf, ".", 1);
        let e = |req, rep| Some(Exchange { req, rep });
        let expect = [
            e(70 + 2 + 10 + 2, 87),   // NTCreateX: 70 + 2 + 2L + 2 = 84, 39 + 48
            e(47, 39),                // Close
            e(47 + 10 + 12, 39),      // Rename: 47 + 2 × 5 + 2 × 6 = 69
            e(39 + 2 + 10 + 2, 39),   // Unlink: 39 + 2 + 2L + 2 = 53
            e(53, 39),                // Mkdir
            e(53, 39),                // Rmdir
            None,                     // Deltree: no exchange
            e(55 + 10, 71),           // QUERY_PATH_INFORMATION: 55 + 2L
            e(84, 87),                // NTCreateX
            e(59, 71),                // QUERY_FILE_INFORMATION
            e(59, 71),                // QUERY_FS_INFORMATION
            e(71, 47),                // SET_FILE_INFORMATION
            e(59 + 10, 39 + 90 * 11), // FIND_FIRST count 11: 39 + 990 = 1 029
            e(59 + 1000, 55),         // WriteX s = 1000
            e(59, 59 + 4000),         // ReadX: the returned size r = 4000, not 4096
            e(51, 39),                // LockX
            e(51, 39),                // UnlockX
            e(41, 39),                // Flush
            None,                     // Sleep
        ];
        assert_eq!(ex, expect);
        // counted bytes: WriteX's size and ReadX's returned size only
        let c: Vec<u64> = lf.lines.iter().map(counted).collect();
        assert_eq!(c.iter().sum::<u64>(), 1000 + 4000);
        assert_eq!(c[13], 1000);
        assert_eq!(c[14], 4000);
    }

    #[test]
    fn path_length_grows_at_ids_10_and_100() {
        // "./clients/client1/x" is 19 characters; client0…client9 keep it, client10…client99
        // add one, client100 and up two (§15.2)
        let p = "/clients/client1/x";
        assert_eq!(path_len(p, ".", 0), 19);
        assert_eq!(path_len(p, ".", 9), 19);
        assert_eq!(path_len(p, ".", 10), 20);
        assert_eq!(path_len(p, ".", 99), 20);
        assert_eq!(path_len(p, ".", 100), 21);
        // every occurrence is rewritten; the directory counts
        assert_eq!(path_len("/client1/client1", ".", 12), 1 + 8 + 8 + 2);
        assert_eq!(path_len(p, "/mnt/t", 0), 24);
        // in the request: QUERY_PATH_INFORMATION is 55 + 2L: 93 for client 9, 95 for 10
        let lf = loadfile::parse(
            "q.txt",
            "QUERY_PATH_INFORMATION \"\\clients\\client1\\x\" 1004 NT_STATUS_OK\n",
        )
        .unwrap();
        assert_eq!(exchanges(&lf, ".", 9)[0].unwrap().req, 93);
        assert_eq!(exchanges(&lf, ".", 10)[0].unwrap().req, 95);
        assert_eq!(exchanges(&lf, ".", 100)[0].unwrap().req, 97);
    }
}
