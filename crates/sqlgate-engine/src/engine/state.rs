//! What a state-changing item's judge gives and what an engine lends the metrics to judge such
//! items on a server (issue 46): the verdict with the official report's flags ([`Verdict`]), a
//! fault of the harness ([`Fault`]), the evaluator profiles ([`Profile`]), and the judge interface
//! ([`LiveJudge`]). A leaf, so the engine interface (`exec`) can name it without importing the
//! judges (`livesql`), which import the servers.

use crate::input::livesql::LiveItem;

/// Which evaluator's semantics decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `livesql`: the official SQLite evaluator's verdicts.
    Official,
    /// `livesql-sound`: the same checks without the official quirks.
    Sound,
    /// `bird-critic`: BIRD-Critic's SQLite evaluator, a descendant of the official one: every
    /// test gets `conditions=`, and an item whose `issue_sql` passes its tests fails. On a
    /// server, BIRD-Critic's PostgreSQL / MySQL evaluator (neither rule).
    BirdCritic,
    /// `bird-critic-sound`: the sound profile with BIRD-Critic's two rules (every test gets
    /// `conditions=`; an item whose `issue_sql` passes its tests, judged the same sound way,
    /// fails), so what the gold reads is never what the prediction left (red team round 26,
    /// win C). On a server, the server evaluator's flow with its tests on a new session and
    /// their gold on a twin clone (`livesql::postgres::sound`, `livesql::mysql::sound`).
    BirdCriticSound,
}

impl Profile {
    /// The name the config and the reports use.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Official => "livesql",
            Profile::Sound => "livesql-sound",
            Profile::BirdCritic => "bird-critic",
            Profile::BirdCriticSound => "bird-critic-sound",
        }
    }

    /// Whether every test case gets `conditions=` and an item whose `issue_sql` passes its tests
    /// fails (BIRD-Critic's two rules).
    pub fn bird_critic_rules(self) -> bool {
        matches!(self, Profile::BirdCritic | Profile::BirdCriticSound)
    }

    /// Whether statements run as the official evaluators' Python `sqlite3` runs them (RETURNING
    /// fails, an error text naming a timeout is a timeout, a stopped item is an execution error).
    pub fn python_semantics(self) -> bool {
        matches!(self, Profile::Official | Profile::BirdCritic)
    }
}

/// One item's verdict, with the official report's flags.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    /// The item passes.
    pub success: bool,
    /// A statement failed, or the item was stopped under the official profile (its wrapper's
    /// kill is an execution error).
    pub execution_error: bool,
    /// A statement failed with an error the profile counts as a timeout, or the item was
    /// stopped under the sound profile.
    pub timeout_error: bool,
    /// A test case failed.
    pub assertion_error: bool,
    /// The deadline or step budget stopped the item.
    pub stopped: bool,
    /// What failed, in the official wording.
    pub message: String,
    /// BIRD-Critic: the item's `issue_sql` passed every test, so the item fails.
    pub issue_sql_passed: bool,
}

/// Why an item has no verdict: a fault of the harness (a copy that could not be made, a test
/// runner that could not start), never the prediction's.
pub type Fault = String;

/// A judge of state-changing items on a server, each item on an isolated copy of its database
/// (`livesql::postgres::PgRun`, `livesql::mysql::MyRun`): what a server engine lends the metrics when the config asks for one
/// (`Engine::live_judge`).
pub trait LiveJudge: Send + Sync {
    /// Judges one item under `profile` (`bird-critic`, BIRD-Critic's server evaluator, or
    /// `bird-critic-sound`, its gold on a twin clone); a fault of the harness is an `Err`, never
    /// a verdict.
    fn judge(
        &self,
        item: &LiveItem,
        prediction: Option<&[String]>,
        profile: Profile,
    ) -> Result<Verdict, Fault>;

    /// Once scoring has ended, before the server claim is checked: drops the copies made since
    /// the claim, each accounted for (an error when one cannot be).
    fn finish(&self) -> Result<(), Fault>;

    /// Drops all the judge made on the server (its copies, templates and roles), once the claim
    /// is checked.
    fn close(&self);
}
