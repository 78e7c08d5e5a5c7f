//! Tournaments: many seeded games between two players, spread over threads, summed up as the
//! mean payoff with a 95% confidence interval, the capture / escape / survival rates and the
//! plans that came late or failed. Game i is played from seed S + i, so a tournament is
//! repeatable (built-in players draw their own randomness from the game's seed too).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::engine::{plan_counts, play_game, Clock, PlanCounts};
use super::params::{Ending, Params};
use super::players::{PlayerSpec, Role};
use super::record::GameRecord;

/// The seed a player draws its own randomness from in the game played from `seed`.
pub fn player_seed(seed: u64, role: Role) -> u64 {
    let salt = match role {
        Role::Thief => 0x7468_6965_6600_0000,
        Role::Police => 0x706f_6c69_6365_0000,
    };
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt
}

/// Plays the game from `seed`; an external program that cannot be started is an error.
pub fn play_seeded(params: &Params, seed: u64, thief: &PlayerSpec, police: &PlayerSpec, clock: Clock) -> std::io::Result<GameRecord> {
    let thief = thief.create(Role::Thief, params, player_seed(seed, Role::Thief))?;
    let police = police.create(Role::Police, params, player_seed(seed, Role::Police))?;
    Ok(play_game(params, seed, thief, police, clock))
}

/// The summary of a tournament (payoffs are the thief's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub thief: String,
    pub police: String,
    pub games: u32,
    pub mean_payoff: f64,
    /// Half-width of the 95% confidence interval of the mean (normal approximation).
    pub ci95: f64,
    pub caught: u32,
    pub escaped: u32,
    pub survived: u32,
    /// Mean tick at which the game ended (T for survival).
    pub mean_length: f64,
    pub thief_plans: PlanCounts,
    pub police_plans: PlanCounts,
}

impl Summary {
    pub fn from_records(thief: &PlayerSpec, police: &PlayerSpec, records: &[GameRecord]) -> Summary {
        let mut summary = Summary { thief: thief.to_string(), police: police.to_string(), games: records.len() as u32, ..Summary::default() };
        let payoffs: Vec<f64> = records.iter().map(|r| r.payoff as f64).collect();
        let (mean, ci) = mean_and_ci95(&payoffs);
        summary.mean_payoff = mean;
        summary.ci95 = ci;
        let mut length = 0.0;
        for record in records {
            let end = match record.ending {
                Ending::Caught { t } => {
                    summary.caught += 1;
                    t + 1
                }
                Ending::Escaped { t } => {
                    summary.escaped += 1;
                    t + 1
                }
                Ending::Survived => {
                    summary.survived += 1;
                    record.params.t_max
                }
            };
            length += end as f64;
            for (role, total) in [(Role::Thief, &mut summary.thief_plans), (Role::Police, &mut summary.police_plans)] {
                let counts = plan_counts(record, role);
                total.plans += counts.plans;
                total.late += counts.late;
                total.failed += counts.failed;
                total.worst_micros = total.worst_micros.max(counts.worst_micros);
                total.total_micros += counts.total_micros;
            }
        }
        summary.mean_length = length / records.len().max(1) as f64;
        summary
    }

    pub fn rate(&self, count: u32) -> f64 {
        count as f64 / self.games.max(1) as f64
    }
}

/// The mean and the half-width of its 95% confidence interval (1.96 standard errors).
pub fn mean_and_ci95(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (variance / n).sqrt())
}

/// Plays one game from each seed of `seeds` on `threads` threads (each game's two players have
/// a thread each besides); `on_game` is called after every game (progress). Records come back
/// in seed order.
pub fn run(
    params: &Params,
    thief: &PlayerSpec,
    police: &PlayerSpec,
    seeds: std::ops::Range<u64>,
    clock: Clock,
    threads: usize,
    on_game: &(dyn Fn(&GameRecord) + Sync),
) -> std::io::Result<Vec<GameRecord>> {
    let games = seeds.end.saturating_sub(seeds.start);
    let next = AtomicU64::new(0);
    let results: Mutex<Vec<(u64, GameRecord)>> = Mutex::new(Vec::with_capacity(games as usize));
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= games || failure.lock().expect("not poisoned").is_some() {
                    break;
                }
                match play_seeded(params, seeds.start + i, thief, police, clock) {
                    Ok(record) => {
                        on_game(&record);
                        results.lock().expect("not poisoned").push((i, record));
                    }
                    Err(e) => {
                        *failure.lock().expect("not poisoned") = Some(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("not poisoned") {
        return Err(e);
    }
    let mut results = results.into_inner().expect("not poisoned");
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confidence_interval_is_1_96_standard_errors() {
        let (mean, ci) = mean_and_ci95(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(mean, 2.5);
        let sd = (5.0f64 / 3.0).sqrt();
        assert!((ci - 1.96 * sd / 2.0).abs() < 1e-12);
        assert_eq!(mean_and_ci95(&[7.0]), (7.0, 0.0));
    }

    #[test]
    fn a_tournament_is_repeatable_and_in_seed_order() {
        let params = Params { t_max: 40, ..Params::default() };
        let a = run(&params, &PlayerSpec::AStar, &PlayerSpec::Random, 100..106, Clock::Paused, 2, &|_| {}).unwrap();
        let b = run(&params, &PlayerSpec::AStar, &PlayerSpec::Random, 100..106, Clock::Paused, 3, &|_| {}).unwrap();
        let deciding = |records: &[GameRecord]| records.iter().map(|r| (r.seed, r.start.clone(), r.plans(), r.ending)).collect::<Vec<_>>();
        assert_eq!(deciding(&a), deciding(&b));
        assert_eq!(a.iter().map(|r| r.seed).collect::<Vec<_>>(), (100..106).collect::<Vec<_>>());
        let summary = Summary::from_records(&PlayerSpec::AStar, &PlayerSpec::Random, &a);
        assert_eq!(summary.caught + summary.escaped + summary.survived, 6);
        assert_eq!(summary.thief_plans.late + summary.police_plans.late, 0);
    }
}
