-- Collective skew per step: for the n-th occurrence of each collective (NCCL/RCCL/HCCL kernels,
-- `nccl:*` / `gloo:*` record_function ranges) within each ProfilerStep#N, how far apart the
-- ranks started it (wall clock: start_epoch_ns). GPU kernels are assigned to the step of their
-- launch (same correlation_id). Largest skew first. Runs unchanged on DataFusion, DuckDB and
-- Spark SQL.
WITH steps AS (
  SELECT run, rank, capture, CAST(SUBSTR(name, 14) AS BIGINT) AS step, start_ns AS s0, end_ns AS s1
  FROM events
  WHERE phase = 'slice' AND name LIKE 'ProfilerStep#%'
),
launches AS (
  SELECT run, rank, capture, correlation_id, MIN(start_ns) AS launch_ns
  FROM events
  WHERE phase = 'slice' AND category_class = 'cuda_runtime' AND correlation_id IS NOT NULL
  GROUP BY run, rank, capture, correlation_id
),
colls AS (
  SELECT
    e.run,
    e.rank,
    e.capture,
    e.name,
    COALESCE(e.start_epoch_ns, e.start_ns) AS t,
    COALESCE(l.launch_ns, e.start_ns) AS host_ns
  FROM events e
  LEFT JOIN launches l
    ON l.run = e.run AND l.rank = e.rank AND l.capture = e.capture
    AND l.correlation_id = e.correlation_id AND e.track_kind = 'gpu_stream'
  WHERE e.phase = 'slice'
    AND (e.name LIKE 'nccl%' OR e.name LIKE 'rccl%' OR e.name LIKE 'hccl%'
         OR e.name LIKE '%ncclKernel%' OR e.name LIKE '%ncclDevKernel%' OR e.name LIKE 'gloo:%')
),
in_step AS (
  SELECT
    c.run,
    c.rank,
    s.step,
    c.name,
    c.t,
    ROW_NUMBER() OVER (PARTITION BY c.run, c.rank, s.step, c.name ORDER BY c.t) AS occurrence
  FROM colls c
  JOIN steps s
    ON s.run = c.run AND s.rank = c.rank AND s.capture = c.capture
    AND c.host_ns >= s.s0 AND c.host_ns < s.s1
)
SELECT
  run,
  step,
  name,
  occurrence,
  COUNT(*) AS ranks,
  MIN(t) AS first_start_epoch_ns,
  MAX(t) - MIN(t) AS skew_ns
FROM in_step
GROUP BY run, step, name, occurrence
ORDER BY run, step, skew_ns DESC, name, occurrence
