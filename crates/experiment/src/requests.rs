//! The requests a load issues, without a device: what makes two commands
//! the same I/O (calibrate's levels and `dbio run`).

use dbio_engine::EngineKind;
use dbio_workload::{Generator, Layout, Op};

use crate::drive::Load;
use crate::ExperimentError;

/// The I/O a closed-loop load issues, user by user, in the order issued:
/// what `drive` hands the engines, without a device. Two loads with the
/// same requests put the same I/O on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requests {
    pub engine: EngineKind,
    pub direct: bool,
    pub users: u32,
    /// Outstanding I/Os per user.
    pub outstanding: u32,
    /// The first operations of each user.
    pub ops: Vec<Vec<Op>>,
}

impl Load<'_> {
    /// Each user's generator of operations, as its thread draws from it.
    pub(crate) fn generators(&self, layout: &Layout) -> Result<Vec<Generator>, ExperimentError> {
        let users = self.users.max(1);
        (0..users)
            .map(|u| Generator::new(self.workload, layout, u, users, self.seed).map_err(Into::into))
            .collect()
    }

    /// The first `per_user` operations of each user (see [`Requests`]).
    pub(crate) fn requests(&self, per_user: usize) -> Result<Requests, ExperimentError> {
        let ops = self
            .generators(&Layout::of(self.dataset))?
            .into_iter()
            .map(|mut g| (0..per_user).map(|_| g.next_op()).collect())
            .collect();
        Ok(Requests {
            engine: self.engine,
            direct: self.direct,
            users: self.users.max(1),
            outstanding: self.outstanding.max(1),
            ops,
        })
    }
}
