-- GPU idle per rank and device: first activity start to last activity end (HTA's kernel_time)
-- minus the time any stream of the device was busy, over the slices of the GPU streams
-- (gpu_user_annotation ranges left out): Kineto GPU streams, and the `Stream #N` lines of XPlane
-- GPU planes (JAX, TensorFlow). Equals `idle_ns` of `tracetui gpu --json` devices. Runs unchanged
-- on DataFusion, DuckDB and Spark SQL.
WITH acts AS (
  SELECT run, rank, capture, device, start_ns, end_ns
  FROM events
  WHERE phase = 'slice' AND category_class <> 'gpu_user_annotation'
    AND (track_kind = 'gpu_stream' OR (device_kind = 'gpu' AND thread_name LIKE 'Stream #%'))
),
ordered AS (
  SELECT
    run, rank, capture, device, start_ns, end_ns,
    MAX(end_ns) OVER (
      PARTITION BY run, rank, capture, device
      ORDER BY start_ns, end_ns
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS busy_until
  FROM acts
)
SELECT
  run,
  rank,
  device,
  MAX(end_ns) - MIN(start_ns) AS kernel_time_ns,
  SUM(CASE WHEN busy_until IS NOT NULL AND start_ns > busy_until THEN start_ns - busy_until ELSE 0 END)
    AS idle_ns
FROM ordered
GROUP BY run, rank, capture, device
ORDER BY run, rank, device
