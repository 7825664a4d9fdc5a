//! epoll instances and eventfd counters (fs/eventpoll.c, fs/eventfd.c; docs/model.md
//! N§1.13). State only, like ipc.rs and net.rs: `ep_poll_callback`, the harvest of
//! `epoll_wait` and the wake-ups with their flags are run by exec.rs.

use crate::net::{EpollId, EventfdId, NetFd, WaitQueue, EPOLLET, EPOLLONESHOT, EP_PRIVATE_BITS};
use crate::sched::TaskId;
use std::collections::{BTreeMap, VecDeque};

/// One registered file (`struct epitem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpItem {
    pub fd: NetFd,
    /// The events asked for, with the EPOLLET/ONESHOT/EXCLUSIVE flags. A ONESHOT item that
    /// fired keeps only its flags (`events &= EP_PRIVATE_BITS`) until `EPOLL_CTL_MOD`.
    pub events: u32,
    /// On the ready list (`ep_is_linked(&epi->rdllink)`).
    pub ready: bool,
}

impl EpItem {
    /// The item can report something (not a fired ONESHOT).
    pub fn armed(&self) -> bool {
        self.events & !EP_PRIVATE_BITS != 0
    }
    pub fn edge(&self) -> bool {
        self.events & EPOLLET != 0
    }
    pub fn oneshot(&self) -> bool {
        self.events & EPOLLONESHOT != 0
    }
}

/// An epoll instance (`struct eventpoll`).
#[derive(Clone, Debug, Default)]
pub struct Epoll {
    /// The interest list, by file.
    pub items: BTreeMap<NetFd, EpItem>,
    /// The ready list (`rdllist`), in the order items became ready.
    pub rdllist: VecDeque<NetFd>,
    /// `epoll_wait` sleepers (`ep->wq`), most recent first: added exclusively at the head
    /// (`__add_wait_queue_exclusive`), so a wake-up takes the front one (LIFO).
    pub waiters: VecDeque<TaskId>,
}

/// An eventfd (`struct eventfd_ctx`), in counter (non-semaphore) mode.
#[derive(Clone, Debug, Default)]
pub struct Eventfd {
    pub count: u64,
    /// Readers sleeping in `eventfd_read` and epoll links.
    pub wq: WaitQueue,
}

/// All epoll instances and eventfds of one simulation.
#[derive(Clone, Debug, Default)]
pub struct EventPoll {
    pub eps: Vec<Epoll>,
    pub eventfds: Vec<Eventfd>,
    /// What each task's last `epoll_wait` harvested (for `Ctx::take_epoll_events`): the
    /// events copied to its user buffer.
    pub harvest: BTreeMap<TaskId, Vec<(NetFd, u32)>>,
}

impl EventPoll {
    pub fn new_epoll(&mut self) -> EpollId {
        self.eps.push(Epoll::default());
        EpollId::new(self.eps.len() - 1)
    }

    pub fn new_eventfd(&mut self) -> EventfdId {
        self.eventfds.push(Eventfd::default());
        EventfdId::new(self.eventfds.len() - 1)
    }

    /// Puts `fd`'s item of `ep` on the ready list unless it is there or disarmed; returns
    /// whether the item exists and is armed.
    pub fn queue_ready(&mut self, ep: EpollId, fd: NetFd) -> bool {
        let e = &mut self.eps[ep.index()];
        let Some(it) = e.items.get_mut(&fd) else {
            return false;
        };
        if !it.armed() {
            return false;
        }
        if !it.ready {
            it.ready = true;
            e.rdllist.push_back(fd);
        }
        true
    }
}
