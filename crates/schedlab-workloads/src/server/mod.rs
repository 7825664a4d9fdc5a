//! `server-model` (netbench.md §17): a generic request/response server over loopback — M
//! client threads, a pool of workers in one of four structures (thread per connection, epoll
//! per worker, one shared epoll, a dispatcher), TCP, UDP or AF_UNIX — with the command line
//! ([`parse`] → [`Options`]), the §17.4 report ([`Report`] → [`render`]) and the model.

mod model;
mod options;
mod output;

pub use model::{workload, ServerModel, LISTEN_BACKLOG};
pub use options::{
    parse, Accept, Arch, ConnMode, Dist, LoopMode, Notify, Options, Side, ThinkMode, Transport,
    WorkerMm, MAX_SIGMA, MAX_STREAM_MSG, MAX_UDP_PAYLOAD,
};
pub use output::{render, Report};

#[cfg(test)]
mod tests;
