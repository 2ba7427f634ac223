use infermeter_sim::calibration::{peak_level, PEAK_LEVELS};
use infermeter_sim::profiles::ProfileSet;
#[test]
#[ignore]
fn levels() {
    let args: Vec<String> = std::env::var("SCR").unwrap().split(',').map(String::from).collect();
    let p = ProfileSet::builtin().resolve(&args[0], &args[1], Some(args[2].parse().unwrap())).unwrap();
    println!("kv tokens {}", p.kv_capacity_tokens());
    let (i, o): (u32, u32) = (args[3].parse().unwrap(), args[4].parse().unwrap());
    for n in PEAK_LEVELS { let l = peak_level(&p, n, i, o); println!("{n:>3} decode {:8.1} ttft {:7.3} sys {:8.1}", l.decode_tps, l.ttft, l.system_tps); }
}
