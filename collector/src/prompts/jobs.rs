//! Agentic jobs: what a trace of agents (cc-traces, Bailian-style) or the suite's generator
//! describes, before anything is sent. A job is a tree of agents; each agent is a sequence of
//! calls to the model. A parent's call can spawn subagents, which run in parallel with it; a
//! later call of the parent can wait for them (a join). Readers and the generator build these;
//! the agents load mode plays them.
//!
//! When a call is sent (the rule every reader and the player share):
//! 1. the agent has started: the root when its job starts, a child when the parent's call it is
//!    spawned after has its whole reply (`spawned_after`), or with its parent when `None`;
//! 2. the agent's previous call has its whole reply;
//! 3. every child joined by this call (`joined_by == Some(this call's index)`) has finished
//!    (its last call has its whole reply, and so have all of its own children, recursively);
//! 4. then `wait_ms` (tool or think time) has passed.
//!
//! A child with `joined_by: None` runs in the background: no call waits for it, but its job
//! is done (and frees its slot) only when every agent has finished.

/// A set of jobs read from a trace or generated, with the block size their `blocks` name.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSet {
    pub jobs: Vec<Job>,
    /// Tokens per prompt block named by `Call::blocks` (64 for cc-traces, 512 for Mooncake).
    pub block_tokens: u32,
}

/// One job: a tree of agents. `agents[0]` is the root; a parent comes before its children.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The job's name in its source (a trace's file stem or id, or "job-N" when generated).
    pub name: String,
    pub agents: Vec<Agent>,
    /// When the job starts, milliseconds after the first job of its set starts (a trace's own
    /// timing); `None` when the source has none (generated jobs, a folder of cc-traces).
    pub offset_ms: Option<f64>,
}

/// One agent: its place in the tree and its calls, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// Index of the parent agent in `Job::agents`; `None` for the root.
    pub parent: Option<usize>,
    /// 0 for the root, its parent's depth + 1 for a child.
    pub depth: u32,
    /// The parent's call (index in the parent's `calls`) after whose reply this agent starts;
    /// `None`: it starts with its parent (the root: with the job).
    pub spawned_after: Option<usize>,
    /// The parent's call that waits for this agent to finish; `None`: no call waits for it
    /// (it runs in the background; the job still lasts until it finishes).
    pub joined_by: Option<usize>,
    pub calls: Vec<Call>,
}

/// One call to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Tool or think time before it is sent, after what it waits for (rule 4 above).
    pub wait_ms: f64,
    /// When the source sent it, milliseconds after its job started (a trace's `t`); `None`
    /// when the source has no timing.
    pub offset_ms: Option<f64>,
    /// The prompt's blocks of `JobSet::block_tokens` tokens, in order, scoped to the job: two
    /// calls of a job naming the same id share that block's text, so an engine's prefix cache
    /// can hit it. Block ids of different jobs never meet (the player scopes them per job).
    pub blocks: Vec<u64>,
}

/// Why a job's tree cannot be played.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    #[error("job {job}: it has no agent")]
    NoAgent { job: String },
    #[error("job {job}: the root agent has a parent, or agent {agent} has none")]
    Parent { job: String, agent: usize },
    #[error("job {job}: agent {agent}'s parent {parent} does not come before it")]
    Order {
        job: String,
        agent: usize,
        parent: usize,
    },
    #[error("job {job}: agent {agent} has no call")]
    NoCall { job: String, agent: usize },
    #[error("job {job}: agent {agent} is spawned after or joined by its parent's call {call}, which does not exist, or joined before it is spawned")]
    Call {
        job: String,
        agent: usize,
        call: usize,
    },
    #[error("job {job}: agent {agent} has depth {depth}, not its parent's + 1")]
    Depth {
        job: String,
        agent: usize,
        depth: u32,
    },
}

impl Agent {
    /// A job's root agent, before its calls are added.
    pub fn root() -> Agent {
        Agent {
            parent: None,
            depth: 0,
            spawned_after: None,
            joined_by: None,
            calls: Vec::new(),
        }
    }
}

impl Job {
    /// Checks the tree: a root first, parents before children, depths, and spawn and join
    /// points that exist in the parent, a join after the spawn.
    pub fn check(&self) -> Result<(), JobError> {
        let job = || self.name.clone();
        let root = self
            .agents
            .first()
            .ok_or(JobError::NoAgent { job: job() })?;
        if root.parent.is_some() || root.depth != 0 {
            return Err(JobError::Parent {
                job: job(),
                agent: 0,
            });
        }
        for (i, agent) in self.agents.iter().enumerate() {
            if agent.calls.is_empty() {
                return Err(JobError::NoCall {
                    job: job(),
                    agent: i,
                });
            }
            if i == 0 {
                continue;
            }
            let parent = agent.parent.ok_or(JobError::Parent {
                job: job(),
                agent: i,
            })?;
            if parent >= i {
                return Err(JobError::Order {
                    job: job(),
                    agent: i,
                    parent,
                });
            }
            let p = &self.agents[parent];
            if agent.depth != p.depth + 1 {
                return Err(JobError::Depth {
                    job: job(),
                    agent: i,
                    depth: agent.depth,
                });
            }
            check_points(agent, p).map_err(|call| JobError::Call {
                job: job(),
                agent: i,
                call,
            })?;
        }
        Ok(())
    }

    /// Every call of the job.
    pub fn calls(&self) -> usize {
        self.agents.iter().map(|a| a.calls.len()).sum()
    }
}

/// The spawn and join points of `agent` in its parent `p`; the failing call index on error.
fn check_points(agent: &Agent, p: &Agent) -> Result<(), usize> {
    let calls = p.calls.len();
    if let Some(s) = agent.spawned_after.filter(|s| *s >= calls) {
        return Err(s);
    }
    match (agent.spawned_after, agent.joined_by) {
        (_, Some(j)) if j >= calls => Err(j),
        (Some(s), Some(j)) if j <= s => Err(j),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Call {
        Call {
            input_tokens: 100,
            output_tokens: 10,
            wait_ms: 0.0,
            offset_ms: None,
            blocks: vec![],
        }
    }

    fn agent(
        parent: Option<usize>,
        depth: u32,
        spawn: Option<usize>,
        join: Option<usize>,
    ) -> Agent {
        Agent {
            parent,
            depth,
            spawned_after: spawn,
            joined_by: join,
            calls: vec![call(), call()],
        }
    }

    fn job(agents: Vec<Agent>) -> Job {
        Job {
            name: "j".into(),
            agents,
            offset_ms: None,
        }
    }

    #[test]
    fn a_fork_and_join_tree_is_accepted_and_broken_ones_are_named() {
        let good = job(vec![
            agent(None, 0, None, None),
            agent(Some(0), 1, Some(0), Some(1)),
            agent(Some(1), 2, Some(0), None),
        ]);
        assert_eq!(good.check(), Ok(()));
        assert_eq!(good.calls(), 6);
        let joined_before_spawn = job(vec![
            agent(None, 0, None, None),
            agent(Some(0), 1, Some(1), Some(1)),
        ]);
        assert!(matches!(
            joined_before_spawn.check(),
            Err(JobError::Call {
                agent: 1,
                call: 1,
                ..
            })
        ));
        let missing_call = job(vec![
            agent(None, 0, None, None),
            agent(Some(0), 1, Some(5), None),
        ]);
        assert!(matches!(
            missing_call.check(),
            Err(JobError::Call { call: 5, .. })
        ));
        let wrong_depth = job(vec![
            agent(None, 0, None, None),
            agent(Some(0), 2, Some(0), None),
        ]);
        assert!(matches!(wrong_depth.check(), Err(JobError::Depth { .. })));
        let orphan = job(vec![agent(None, 0, None, None), agent(None, 1, None, None)]);
        assert!(matches!(
            orphan.check(),
            Err(JobError::Parent { agent: 1, .. })
        ));
        assert!(matches!(job(vec![]).check(), Err(JobError::NoAgent { .. })));
    }
}
