package messaging

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/platform"
)

// Observe makes the engine count each send in m, by provider and outcome,
// and log each failed one on logger at warn. Either may be nil. Call it
// before the engine runs.
func (e *Deliverer) Observe(logger *slog.Logger, m *platform.Metrics) *Deliverer {
	e.obs = sendObserver{logger: logger}
	if m != nil {
		e.obs.sends = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_sends_duration_seconds",
			Help: "Sends through a provider, by provider and outcome (sent, partial, failed), and how long they took.",
		}, []string{"provider", "outcome"})
		m.MustRegister(e.obs.sends)
	}
	return e
}

// sendObserver is what Observe set.
type sendObserver struct {
	logger *slog.Logger
	sends  *prometheus.HistogramVec // nil counts nothing
}

// sent reports one send through providerID that took d and ended in err:
// counted as sent, partial or failed, and a failure logged with what an
// operator needs to find it (the workflow, step, provider and
// transactionId) and the provider's reason. The reason is the error's text,
// which providers build from the provider's answer, never from the
// integration's credentials; the send's own webhook URL and device tokens,
// which that answer may echo, are masked (withoutSecrets).
func (o sendObserver) sent(ctx context.Context, d *Delivery, providerID string, m provider.Message, took time.Duration, err error) {
	outcome := "sent"
	var some *provider.Partial
	switch {
	case errors.As(err, &some):
		outcome = "partial"
	case err != nil:
		outcome = "failed"
	}
	if o.sends != nil {
		o.sends.WithLabelValues(providerID, outcome).Observe(took.Seconds())
	}
	if err == nil || o.logger == nil {
		return
	}
	o.warn(ctx, d, outcome, providerID, withoutSecrets(err.Error(), m))
}

// notSent logs a delivery that reached no provider (no integration, no
// address, bad credentials, a template that could not be rendered) as a
// failed send with the reason its step records, and returns out.
func (o sendObserver) notSent(ctx context.Context, d *Delivery, out *Outcome) *Outcome {
	if o.logger != nil && len(out.Details) > 0 {
		o.warn(ctx, d, "not_sent", out.ProviderID, out.Details[len(out.Details)-1].Detail)
	}
	return out
}

func (o sendObserver) warn(ctx context.Context, d *Delivery, outcome, providerID, reason string) {
	o.logger.LogAttrs(ctx, slog.LevelWarn, "send failed",
		slog.String("outcome", outcome),
		slog.String("workflow", d.WorkflowID),
		slog.String("step", d.StepID),
		slog.String("channel", d.Channel),
		slog.String("provider", providerID),
		slog.String("transaction_id", d.TransactionID),
		slog.String("environment_id", d.EnvironmentID),
		slog.String("job_id", d.JobID),
		slog.Int("attempt", d.Attempt),
		slog.String("reason", reason))
}

// withoutSecrets is reason with the send's own channel credentials masked:
// its webhook URL, that URL's path (a chat webhook's secret is in it) and
// its device tokens. A provider's answer may echo what it was sent, and
// whoever reads the log is not meant to be able to post to the channel.
func withoutSecrets(reason string, m provider.Message) string {
	var pairs []string
	if m.WebhookURL != "" {
		pairs = append(pairs, m.WebhookURL, "[webhook URL]")
		if u, err := url.Parse(m.WebhookURL); err == nil && len(u.Path) > 1 {
			pairs = append(pairs, u.RequestURI(), "[webhook path]", u.EscapedPath(), "[webhook path]")
		}
	}
	for _, token := range m.DeviceTokens {
		if token != "" {
			pairs = append(pairs, token, "[device token]")
		}
	}
	if pairs == nil {
		return reason
	}
	return strings.NewReplacer(pairs...).Replace(reason)
}
