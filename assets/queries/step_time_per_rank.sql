-- Step time per rank: the duration of every PyTorch ProfilerStep#N of every rank, with the
-- rank's slowest step and the step's spread across ranks. Summed per capture it equals the
-- host `ProfilerStep*` row (kind annotation) of `tracetui stats`. Runs unchanged on DataFusion, DuckDB and Spark SQL.
WITH steps AS (
  SELECT
    run,
    rank,
    CAST(SUBSTR(name, 14) AS BIGINT) AS step,
    start_ns,
    dur_ns
  FROM events
  WHERE phase = 'slice' AND name LIKE 'ProfilerStep#%'
    -- Host annotations only: Kineto mirrors a step on the GPU stream (gpu_user_annotation).
    AND track_kind <> 'gpu_stream'
)
SELECT
  run,
  rank,
  step,
  dur_ns AS step_ns,
  MAX(dur_ns) OVER (PARTITION BY run, step) - MIN(dur_ns) OVER (PARTITION BY run, step)
    AS spread_across_ranks_ns
FROM steps
ORDER BY run, step, rank
