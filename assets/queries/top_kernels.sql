-- Top GPU kernels across ranks: calls, total / self / mean / min / max duration and how many
-- ranks ran each kernel, by total time. Equals `tracetui stats --cat kernel` summed over the
-- captures. Runs unchanged on tracetui sql (DataFusion), DuckDB and Spark SQL.
SELECT
  name,
  COUNT(*) AS calls,
  SUM(dur_ns) AS total_ns,
  SUM(self_time_ns) AS self_ns,
  AVG(dur_ns) AS avg_ns,
  MIN(dur_ns) AS min_ns,
  MAX(dur_ns) AS max_ns,
  COUNT(DISTINCT rank) AS ranks
FROM events
WHERE phase = 'slice' AND category_class = 'kernel'
GROUP BY name
ORDER BY total_ns DESC, name
LIMIT 50
