//! Prometheus text exposition with vLLM's metric names (hand formatted; a handful of series).

use std::fmt::Write;

const TIME_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];

#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    pub fn observe(&mut self, v: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; TIME_BUCKETS.len()];
        }
        for (c, b) in self.counts.iter_mut().zip(TIME_BUCKETS) {
            if v <= *b {
                *c += 1;
            }
        }
        self.sum += v;
        self.count += 1;
    }
}

#[derive(Debug, Clone, Default)]
pub struct Metrics {
    pub running: usize,
    pub waiting: usize,
    pub kv_usage: f64,
    pub prompt_tokens: u64,
    pub generation_tokens: u64,
    pub prefix_cache_queries: u64,
    pub prefix_cache_hits: u64,
    pub preemptions: u64,
    pub success_length: u64,
    pub success_stop: u64,
    pub queue_time: Histogram,
    pub prefill_time: Histogram,
    pub decode_time: Histogram,
    pub ttft: Histogram,
    pub e2e: Histogram,
    pub itl: Histogram,
}

impl Metrics {
    /// Counters and gauges: name, help, type and value.
    fn scalars(&self) -> [(&'static str, &'static str, &'static str, String); 9] {
        [
            (
                "vllm:num_requests_running",
                "Number of requests in model execution batches.",
                "gauge",
                self.running.to_string(),
            ),
            (
                "vllm:num_requests_waiting",
                "Number of requests waiting to be processed.",
                "gauge",
                self.waiting.to_string(),
            ),
            (
                "vllm:gpu_cache_usage_perc",
                "GPU KV-cache usage. 1 means 100 percent usage.",
                "gauge",
                format!("{}", self.kv_usage),
            ),
            (
                "vllm:kv_cache_usage_perc",
                "KV-cache usage. 1 means 100 percent usage.",
                "gauge",
                format!("{}", self.kv_usage),
            ),
            (
                "vllm:prompt_tokens_total",
                "Number of prefill tokens processed.",
                "counter",
                self.prompt_tokens.to_string(),
            ),
            (
                "vllm:generation_tokens_total",
                "Number of generation tokens processed.",
                "counter",
                self.generation_tokens.to_string(),
            ),
            (
                "vllm:num_preemptions_total",
                "Cumulative number of preemptions.",
                "counter",
                self.preemptions.to_string(),
            ),
            (
                "vllm:prefix_cache_queries_total",
                "Prefix cache queries, in tokens.",
                "counter",
                self.prefix_cache_queries.to_string(),
            ),
            (
                "vllm:prefix_cache_hits_total",
                "Prefix cache hits, in tokens.",
                "counter",
                self.prefix_cache_hits.to_string(),
            ),
        ]
    }

    /// Histograms: name, help and the histogram.
    fn histograms(&self) -> [(&'static str, &'static str, &Histogram); 6] {
        [
            (
                "vllm:request_queue_time_seconds",
                "Time spent in WAITING phase for request.",
                &self.queue_time,
            ),
            (
                "vllm:request_prefill_time_seconds",
                "Time spent in PREFILL phase for request.",
                &self.prefill_time,
            ),
            (
                "vllm:request_decode_time_seconds",
                "Time spent in DECODE phase for request.",
                &self.decode_time,
            ),
            (
                "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.",
                &self.ttft,
            ),
            (
                "vllm:e2e_request_latency_seconds",
                "Histogram of end to end request latency in seconds.",
                &self.e2e,
            ),
            (
                "vllm:inter_token_latency_seconds",
                "Histogram of inter-token latency in seconds.",
                &self.itl,
            ),
        ]
    }

    pub fn render(&self, model: &str) -> String {
        let mut s = String::new();
        let label = format!(
            "model_name=\"{}\"",
            model.replace('\\', "\\\\").replace('"', "\\\"")
        );
        for (name, help, kind, value) in self.scalars() {
            let _ = writeln!(
                s,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{{label}}} {value}"
            );
        }
        let _ = writeln!(s, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter");
        let _ = writeln!(
            s,
            "vllm:request_success_total{{finished_reason=\"length\",{label}}} {}",
            self.success_length
        );
        let _ = writeln!(
            s,
            "vllm:request_success_total{{finished_reason=\"stop\",{label}}} {}",
            self.success_stop
        );
        for (name, help, h) in self.histograms() {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} histogram");
            for (i, b) in TIME_BUCKETS.iter().enumerate() {
                let c = h.counts.get(i).copied().unwrap_or(0);
                let _ = writeln!(s, "{name}_bucket{{{label},le=\"{b}\"}} {c}");
            }
            let _ = writeln!(s, "{name}_bucket{{{label},le=\"+Inf\"}} {}", h.count);
            let _ = writeln!(s, "{name}_sum{{{label}}} {}", h.sum);
            let _ = writeln!(s, "{name}_count{{{label}}} {}", h.count);
        }
        s
    }
}
