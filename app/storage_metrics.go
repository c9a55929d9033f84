package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/sqldb"
)

// storageGauge reports, per environment, the bytes of the database its
// records hold: the large values it stored once (stored_values, counted
// exactly), and the rest of the database shared out by its share of the
// records (notifications, messages, jobs, subscribers), counted on indexes
// that start with the environment. Reading every record's bytes would take
// as long as the database is large; this reads counts and sizes, at most
// once a minute.
type storageGauge struct {
	db     *sqldb.DB
	logger *slog.Logger
	desc   *prometheus.Desc

	mu    sync.Mutex
	at    time.Time
	bytes map[string]float64
}

// storageEvery is how long one computation of the figures is reported.
const storageEvery = time.Minute

// recordTables are the tables whose rows share the database's bytes among
// environments.
var recordTables = []string{"notifications", "messages", "jobs", "subscribers"}

func newStorageGauge(db *sqldb.DB, logger *slog.Logger) *storageGauge {
	return &storageGauge{db: db, logger: logger, desc: prometheus.NewDesc("herald_environment_stored_bytes",
		"Bytes of the database an environment's records hold: its stored values, and its share of the rest by record count.",
		[]string{"environment"}, nil)}
}

func (g *storageGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *storageGauge) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.at) >= storageEvery {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		bytes, err := g.measure(ctx)
		cancel()
		if err != nil {
			g.logger.Warn("measure storage per environment", "error", err)
			return
		}
		g.at, g.bytes = time.Now(), bytes
	}
	for env, n := range g.bytes {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, n, env)
	}
}

// measure computes the figures.
func (g *storageGauge) measure(ctx context.Context) (map[string]float64, error) {
	size, err := g.db.Size(ctx)
	if err != nil {
		return nil, err
	}
	values, err := g.groupSums(ctx, `SELECT environment_id, CAST(sum(length(body)) AS BIGINT) FROM stored_values GROUP BY environment_id`)
	if err != nil {
		return nil, err
	}
	records := map[string]float64{}
	var all, inValues float64
	for _, table := range recordTables {
		counts, err := g.groupSums(ctx, `SELECT environment_id, count(*) FROM `+table+` GROUP BY environment_id`)
		if err != nil {
			return nil, err
		}
		for env, n := range counts {
			records[env] += n
			all += n
		}
	}
	out := map[string]float64{}
	for env, n := range values {
		out[env], inValues = n, inValues+n
	}
	rest := max(float64(size)-inValues, 0)
	for env, n := range records {
		out[env] += rest * n / all
	}
	return out, nil
}

// groupSums answers query's rows of an environment and a number.
func (g *storageGauge) groupSums(ctx context.Context, query string) (map[string]float64, error) {
	rows, err := g.db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var env string
		var n float64
		if err := rows.Scan(&env, &n); err != nil {
			return nil, err
		}
		out[env] = n
	}
	return out, rows.Err()
}
