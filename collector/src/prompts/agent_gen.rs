//! Agentic jobs made up without a trace: a seeded generator of job trees with the knobs users
//! ask for; [`AgentSpec`] is what the suite's `[agents]` section is to deserialise into.
//!
//! What one job is. Its root agent, and every subagent, runs a tool loop of `turns` calls.
//! Every agent of a job starts its prompt with the same system prompt (`system_prompt_tokens`:
//! the same blocks in every agent, so an engine's prefix cache can reuse them across the tree),
//! then a task of its own (`task_tokens`: the user's request for the root, the instructions a
//! parent hands a subagent). Each later call's prompt is the previous call's prompt, its reply
//! (`output_tokens`) and the tool's output (`tool_output_tokens`): the agent's blocks extend,
//! so each call can hit the cache for everything the previous one sent. Before a call the agent
//! waits `think_time` (client-side work), and before every call but its first also `tool_wait`
//! (the tool the previous reply called runs).
//!
//! Forks and joins. After each call but its last, an agent shallower than `max_depth` spawns
//! subagents with chance `spawn_chance`, `subagents` of them, while the job holds fewer than
//! `max_agents`. They start when that call has its whole reply; the agent's next call waits
//! for all of them (a join), or, with chance `background_chance` for the group, none does
//! (they run in the background and the job lasts until they finish). An agent whose next
//! prompt would pass `max_context_tokens` stops there (its first prompt is cut to it); a group
//! it spawned with its last call made then runs in the background.
//!
//! Draws. Counts (turns, subagents, tokens) come from the report's length distributions, drawn
//! stratified (`LengthDistribution::draw`: a pool per knob, taken in turn), so their means
//! hold closely over a few hundred draws; chances and waits from a seeded generator. The same
//! spec, seed and number of jobs give the same `JobSet`, bit for bit.

use infermeter_report::lengths::splitmix;
use infermeter_report::{LengthDistribution, ThinkTime};
use rand::{Rng, SeedableRng};
use serde::Deserialize;

use super::jobs::{Agent, Call, Job, JobSet};
use super::think::{think_time_ok, Thinker};

/// Tokens per block of generated prompts (the cc-traces' block size).
pub const GENERATED_BLOCK_TOKENS: u32 = 64;
/// Draws per knob's pool: enough that a pool's stratified mean is the distribution's.
const POOL: usize = 4096;
const MAX_DEPTH: u32 = 16;
const MAX_AGENTS: u32 = 10_000;

/// The shape of generated agentic jobs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentSpec {
    /// Calls per agent (the tool loop's depth), root and subagents alike.
    #[serde(deserialize_with = "count")]
    pub turns: LengthDistribution,
    /// Chance that a call (not an agent's last) spawns subagents.
    pub spawn_chance: f64,
    /// Subagents a spawning call starts.
    #[serde(deserialize_with = "count")]
    pub subagents: LengthDistribution,
    /// Deepest subagent: 0 (the root only), 1 (its subagents), …
    pub max_depth: u32,
    /// Agents of a job at most, root included: no call spawns past it.
    pub max_agents: u32,
    /// Chance that a spawned group runs in the background (no call waits for it).
    pub background_chance: f64,
    /// The system prompt every agent of a job starts with.
    pub system_prompt_tokens: u32,
    /// Each agent's own first message after the system prompt.
    #[serde(deserialize_with = "count")]
    pub task_tokens: LengthDistribution,
    /// Tool output added to the context after each reply (growth per turn besides the reply).
    #[serde(deserialize_with = "count")]
    pub tool_output_tokens: LengthDistribution,
    /// Each call's reply.
    #[serde(deserialize_with = "count")]
    pub output_tokens: LengthDistribution,
    /// The tool's run before every call but an agent's first.
    pub tool_wait: ThinkTime,
    /// Client-side time before every call.
    pub think_time: ThinkTime,
    /// The longest prompt: an agent stops before a call that would pass it.
    pub max_context_tokens: u32,
}

impl Default for AgentSpec {
    fn default() -> AgentSpec {
        let lognormal = |mean: f64, stddev: f64| LengthDistribution::Lognormal {
            mean,
            stddev,
            min: None,
            max: None,
        };
        AgentSpec {
            turns: LengthDistribution::Uniform { min: 2, max: 8 },
            spawn_chance: 0.15,
            subagents: LengthDistribution::Uniform { min: 1, max: 3 },
            max_depth: 2,
            max_agents: 32,
            background_chance: 0.0,
            system_prompt_tokens: 4096,
            task_tokens: lognormal(300.0, 200.0),
            tool_output_tokens: lognormal(600.0, 600.0),
            output_tokens: lognormal(250.0, 200.0),
            tool_wait: ThinkTime::Exponential { mean_s: 1.0 },
            think_time: ThinkTime::Fixed { seconds: 0.0 },
            max_context_tokens: 131_072,
        }
    }
}

/// A count written as a whole number (`turns = 4`) or as a distribution table.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a whole number, or a table such as { distribution = \"uniform\", min = 2, max = 6 }"
)]
enum Count {
    Fixed(u32),
    Distribution(LengthDistribution),
}

fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<LengthDistribution, D::Error> {
    Ok(match Count::deserialize(d)? {
        Count::Fixed(tokens) => LengthDistribution::Fixed { tokens },
        Count::Distribution(dist) => dist,
    })
}

impl AgentSpec {
    /// What is wrong with the spec, naming the knob, if anything.
    pub fn check(&self) -> Result<(), String> {
        let counts = [
            ("turns", &self.turns),
            ("subagents", &self.subagents),
            ("task_tokens", &self.task_tokens),
            ("tool_output_tokens", &self.tool_output_tokens),
            ("output_tokens", &self.output_tokens),
        ];
        for (key, d) in counts {
            if *d == LengthDistribution::Dataset {
                return Err(format!("agents.{key}: \"dataset\" needs a prompt file; generated jobs draw from a distribution"));
            }
            if let Some(problem) = d.problem() {
                return Err(format!("agents.{key}: {problem}"));
            }
        }
        for (key, p) in [
            ("spawn_chance", self.spawn_chance),
            ("background_chance", self.background_chance),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("agents.{key} is {p}: a chance between 0 and 1"));
            }
        }
        for (key, t) in [
            ("tool_wait", &self.tool_wait),
            ("think_time", &self.think_time),
        ] {
            if !think_time_ok(t) {
                return Err(format!("agents.{key} needs a finite, non-negative mean (and a positive mean and non-negative sigma for lognormal)"));
            }
        }
        if self.max_depth > MAX_DEPTH {
            return Err(format!(
                "agents.max_depth is {}: at most {MAX_DEPTH}",
                self.max_depth
            ));
        }
        if !(1..=MAX_AGENTS).contains(&self.max_agents) {
            return Err(format!(
                "agents.max_agents is {}: between 1 and {MAX_AGENTS}",
                self.max_agents
            ));
        }
        if self.system_prompt_tokens >= self.max_context_tokens {
            return Err(format!("agents.system_prompt_tokens ({}) must be below max_context_tokens ({}), leaving room for the task", self.system_prompt_tokens, self.max_context_tokens));
        }
        Ok(())
    }
}

/// `jobs` jobs of `spec`'s shape, named "job-0" …, with no timing of their own (`offset_ms`
/// `None`); the same spec, seed and count give the same set. Refuses a spec that fails
/// [`AgentSpec::check`].
pub fn generate(spec: &AgentSpec, seed: u64, jobs: usize) -> Result<JobSet, String> {
    spec.check()?;
    let mut g = Generator::new(spec, seed);
    let jobs = (0..jobs)
        .map(|n| Job {
            name: format!("job-{n}"),
            agents: g.agents(),
            offset_ms: None,
        })
        .collect();
    Ok(JobSet {
        jobs,
        block_tokens: GENERATED_BLOCK_TOKENS,
    })
}

/// Stratified draws of one knob, taken in turn.
struct Pool {
    values: Vec<u32>,
    next: usize,
}

impl Pool {
    fn new(d: &LengthDistribution, seed: u64) -> Pool {
        // `check` refused `dataset`, the one distribution that draws nothing.
        let values = d.draw(POOL, seed).unwrap_or_else(|| vec![1]);
        Pool { values, next: 0 }
    }

    fn take(&mut self) -> u32 {
        let v = self.values[self.next % self.values.len()];
        self.next += 1;
        v
    }
}

struct Generator<'a> {
    spec: &'a AgentSpec,
    turns: Pool,
    subagents: Pool,
    task: Pool,
    tool_output: Pool,
    output: Pool,
    tool_wait: Thinker,
    think: Thinker,
    rng: rand::rngs::StdRng,
}

impl Generator<'_> {
    fn new(spec: &AgentSpec, seed: u64) -> Generator<'_> {
        let mut state = seed;
        let mut next = || splitmix(&mut state);
        Generator {
            spec,
            turns: Pool::new(&spec.turns, next()),
            subagents: Pool::new(&spec.subagents, next()),
            task: Pool::new(&spec.task_tokens, next()),
            tool_output: Pool::new(&spec.tool_output_tokens, next()),
            output: Pool::new(&spec.output_tokens, next()),
            tool_wait: Thinker::new(spec.tool_wait, next()),
            think: Thinker::new(spec.think_time, next()),
            rng: rand::rngs::StdRng::seed_from_u64(next()),
        }
    }

    /// One job's agents: the root, then each agent's subagents after it (so a parent comes
    /// before its children).
    fn agents(&mut self) -> Vec<Agent> {
        let mut agents = vec![Agent::root()];
        let mut i = 0;
        while i < agents.len() {
            self.run_agent(&mut agents, i);
            i += 1;
        }
        agents
    }

    /// Agent `i`'s calls, and the subagents they spawn (appended to `agents`).
    fn run_agent(&mut self, agents: &mut Vec<Agent>, i: usize) {
        let spec = self.spec;
        let (turns, depth) = (self.turns.take(), agents[i].depth);
        let max = u64::from(spec.max_context_tokens);
        let mut input =
            (u64::from(spec.system_prompt_tokens) + u64::from(self.task.take())).min(max);
        let mut calls: Vec<Call> = Vec::new();
        for k in 0..turns as usize {
            if let Some(prev) = calls.last() {
                input += u64::from(prev.output_tokens) + u64::from(self.tool_output.take());
                if input > max {
                    break;
                }
            }
            let tool = if k > 0 {
                self.tool_wait.pause()
            } else {
                Default::default()
            };
            let wait = self.think.pause() + tool;
            calls.push(Call {
                input_tokens: input as u32,
                output_tokens: self.output.take(),
                wait_ms: wait.as_secs_f64() * 1000.0,
                offset_ms: None,
                blocks: self.blocks(i, input as u32),
            });
            let room = spec.max_agents as usize - agents.len();
            let may_spawn = k + 1 < turns as usize && depth < spec.max_depth && room > 0;
            if may_spawn && self.rng.random::<f64>() < spec.spawn_chance {
                let n = (self.subagents.take() as usize).min(room);
                let background = self.rng.random::<f64>() < spec.background_chance;
                agents.extend((0..n).map(|_| Agent {
                    parent: Some(i),
                    depth: depth + 1,
                    spawned_after: Some(k),
                    joined_by: (!background).then_some(k + 1),
                    calls: Vec::new(),
                }));
            }
        }
        // Cut short by the context: a group joined by a call not made runs in the background.
        let made = calls.len();
        for child in agents.iter_mut().filter(|a| a.parent == Some(i)) {
            child.joined_by = child.joined_by.filter(|&j| j < made);
        }
        agents[i].calls = calls;
    }

    /// The blocks of agent `agent`'s prompt of `input` tokens: the system prompt's whole
    /// blocks (ids from 0, the same in every agent of the job), then the agent's own (ids
    /// `(agent + 1) << 32 | j`, the same in each of its calls, so its prompts extend).
    fn blocks(&self, agent: usize, input: u32) -> Vec<u64> {
        let total = u64::from(input.div_ceil(GENERATED_BLOCK_TOKENS));
        let shared = u64::from(self.spec.system_prompt_tokens / GENERATED_BLOCK_TOKENS).min(total);
        let own = (agent as u64 + 1) << 32;
        (0..shared)
            .chain((shared..total).map(|j| own | j))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(f: impl FnOnce(&mut AgentSpec)) -> AgentSpec {
        let mut s = AgentSpec::default();
        f(&mut s);
        s
    }

    fn all_agents(set: &JobSet) -> impl Iterator<Item = &Agent> {
        set.jobs.iter().flat_map(|j| &j.agents)
    }

    #[test]
    fn the_same_seed_gives_the_same_jobs_and_every_job_is_a_valid_tree() {
        let s = AgentSpec::default();
        let a = generate(&s, 7, 200).unwrap();
        assert_eq!(a, generate(&s, 7, 200).unwrap());
        assert_ne!(a, generate(&s, 8, 200).unwrap());
        assert_eq!(a.block_tokens, 64);
        assert_eq!(a.jobs[3].name, "job-3");
        for job in &a.jobs {
            assert_eq!(job.check(), Ok(()), "{}", job.name);
            assert!(job.agents.len() <= s.max_agents as usize);
            assert!(job.agents.iter().all(|a| a.depth <= s.max_depth));
        }
        assert!(
            all_agents(&a).any(|a| a.depth == 2),
            "default spawns reach depth 2"
        );
    }

    #[test]
    fn turns_and_spawns_hold_their_knobs_over_many_jobs() {
        let s = spec(|s| {
            s.turns = LengthDistribution::Uniform { min: 2, max: 8 };
            s.spawn_chance = 0.3;
            s.subagents = LengthDistribution::Fixed { tokens: 2 };
            s.max_depth = 1;
            s.max_agents = 10_000;
        });
        let set = generate(&s, 1, 2000).unwrap();
        let agents: Vec<&Agent> = all_agents(&set).collect();
        let mean_turns =
            agents.iter().map(|a| a.calls.len()).sum::<usize>() as f64 / agents.len() as f64;
        assert!((mean_turns - 5.0).abs() < 0.1, "mean turns {mean_turns}");
        // Roots' calls that could spawn (all but the last), and those that did.
        let (mut could, mut did) = (0usize, 0usize);
        for job in &set.jobs {
            let root = &job.agents[0];
            could += root.calls.len() - 1;
            let mut spawned: Vec<usize> = job.agents[1..]
                .iter()
                .filter_map(|a| a.spawned_after)
                .collect();
            assert_eq!(spawned.len() % 2, 0, "groups of 2");
            spawned.dedup();
            did += spawned.len();
            // Subagents (depth 1 = max) never spawn.
            assert!(job.agents[1..].iter().all(|a| a.parent == Some(0)));
        }
        let share = did as f64 / could as f64;
        assert!(
            (share - 0.3).abs() < 0.02,
            "spawn share {share} over {could} calls"
        );
    }

    #[test]
    fn prompts_extend_and_share_the_system_prompt_across_the_tree() {
        let s = spec(|s| {
            s.system_prompt_tokens = 1000; // 15 whole blocks, the 16th mixes in the task
            s.tool_output_tokens = LengthDistribution::Fixed { tokens: 100 };
            s.spawn_chance = 1.0;
            s.max_depth = 1;
        });
        let set = generate(&s, 3, 50).unwrap();
        for job in &set.jobs {
            for agent in &job.agents {
                for w in agent.calls.windows(2) {
                    assert_eq!(
                        w[1].input_tokens,
                        w[0].input_tokens + w[0].output_tokens + 100
                    );
                    assert_eq!(w[1].blocks[..w[0].blocks.len()], w[0].blocks[..]);
                }
                let first = &agent.calls[0];
                assert_eq!(first.blocks[..15], (0..15).collect::<Vec<u64>>()[..]);
                assert_ne!(first.blocks[15], 15);
                if let Some(p) = agent.parent {
                    let parent = &job.agents[p].calls[0].blocks;
                    assert_eq!(first.blocks[..15], parent[..15]);
                    assert_ne!(first.blocks[15], parent[15], "tasks are each agent's own");
                }
            }
        }
    }

    #[test]
    fn waits_and_joins_follow_their_knobs() {
        let s = spec(|s| {
            s.tool_wait = ThinkTime::Fixed { seconds: 2.0 };
            s.think_time = ThinkTime::Fixed { seconds: 0.5 };
            s.background_chance = 0.0;
        });
        let set = generate(&s, 4, 100).unwrap();
        for agent in all_agents(&set) {
            assert_eq!(agent.calls[0].wait_ms, 500.0);
            assert!(agent.calls[1..].iter().all(|c| c.wait_ms == 2500.0));
            if let Some(after) = agent.spawned_after {
                assert_eq!(agent.joined_by, Some(after + 1));
            }
        }
        let background = generate(&spec(|s| s.background_chance = 1.0), 4, 100).unwrap();
        let children: Vec<&Agent> = all_agents(&background)
            .filter(|a| a.parent.is_some())
            .collect();
        assert!(!children.is_empty());
        assert!(children.iter().all(|a| a.joined_by.is_none()));
    }

    #[test]
    fn an_agent_stops_before_its_context_passes_the_limit() {
        let s = spec(|s| {
            s.max_context_tokens = 8000;
            s.turns = LengthDistribution::Fixed { tokens: 40 };
            s.spawn_chance = 0.5;
        });
        let set = generate(&s, 5, 100).unwrap();
        for job in &set.jobs {
            assert_eq!(job.check(), Ok(()));
            for a in &job.agents {
                assert!(a.calls.iter().all(|c| c.input_tokens <= 8000));
                assert!(a.calls.len() < 40);
            }
        }
    }

    #[test]
    fn specs_read_from_toml_and_bad_ones_are_named() {
        let s: AgentSpec = toml::from_str(
            "turns = 4\nspawn_chance = 0.5\ntask_tokens = { distribution = \"uniform\", min = 10, max = 20 }\ntool_wait = { distribution = \"exponential\", mean_s = 0.5 }",
        )
        .unwrap();
        assert_eq!(s.turns, LengthDistribution::Fixed { tokens: 4 });
        assert_eq!(
            s.task_tokens,
            LengthDistribution::Uniform { min: 10, max: 20 }
        );
        assert_eq!(s.max_depth, AgentSpec::default().max_depth);
        let unknown = toml::from_str::<AgentSpec>("turn = 4")
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("unknown field `turn`"), "{unknown}");
        let bad = toml::from_str::<AgentSpec>("turns = \"many\"")
            .unwrap_err()
            .to_string();
        assert!(bad.contains("a whole number, or a table"), "{bad}");
        let cases = [
            (spec(|s| s.spawn_chance = 1.5), "agents.spawn_chance is 1.5"),
            (
                spec(|s| s.turns = LengthDistribution::Dataset),
                "agents.turns: \"dataset\"",
            ),
            (
                spec(|s| s.output_tokens = LengthDistribution::Uniform { min: 0, max: 3 }),
                "agents.output_tokens: uniform needs",
            ),
            (spec(|s| s.max_depth = 99), "agents.max_depth is 99"),
            (spec(|s| s.max_agents = 0), "agents.max_agents is 0"),
            (
                spec(|s| s.system_prompt_tokens = 200_000),
                "must be below max_context_tokens",
            ),
            (
                spec(|s| s.tool_wait = ThinkTime::Exponential { mean_s: -1.0 }),
                "agents.tool_wait",
            ),
        ];
        for (s, what) in cases {
            let err = generate(&s, 0, 1).unwrap_err();
            assert!(err.contains(what), "{err}");
        }
    }
}
