package console

import (
	"time"

	"github.com/herald-notify/herald/messaging"
)

// overviewCap is where the overview's counts stop: past it they read "at
// least", so the page costs the same on any database.
const overviewCap = 100_000

// overviewData is what the overview shows of the last 24 hours.
type overviewData struct {
	Since            string
	Triggers         int
	TriggersCapped   bool
	Sent, Failed     int
	Warnings         int
	DeliveriesCapped bool
	Channels         []channelCount
	Providers        []messaging.DeliveryCount
	Failures         []messaging.Sent
	MostAll          int // the largest channel's count, for the bars' scale
}

// channelCount is the deliveries of one channel.
type channelCount struct {
	Channel              string
	Sent, Failed, Warned int
}

// handleOverview serves GET /console/env/{env}/: triggers, deliveries and
// failures of the last 24 hours by channel and provider, and the newest
// failures, each a link to its notification.
func handleOverview(activity Activity, messages Messages) handler {
	return func(p *page) error {
		ctx := p.r.Context()
		since := p.c.d.Now().Add(-24 * time.Hour)
		data := overviewData{Since: since.UTC().Format(time.RFC3339)}
		var err error
		if data.Triggers, data.TriggersCapped, err = activity.TriggerCount(ctx, p.env.ID, since, overviewCap); err != nil {
			return err
		}
		if data.Providers, data.DeliveriesCapped, err = messages.DeliveryCounts(ctx, p.env.ID, since, overviewCap); err != nil {
			return err
		}
		byChannel := map[string]int{}
		for _, c := range data.Providers {
			data.Sent, data.Failed, data.Warnings = data.Sent+c.Sent, data.Failed+c.Failed, data.Warnings+c.Warnings
			i, ok := byChannel[c.Channel]
			if !ok {
				i = len(data.Channels)
				byChannel[c.Channel] = i
				data.Channels = append(data.Channels, channelCount{Channel: c.Channel})
			}
			cc := &data.Channels[i]
			cc.Sent, cc.Failed, cc.Warned = cc.Sent+c.Sent, cc.Failed+c.Failed, cc.Warned+c.Warnings
		}
		for _, c := range data.Channels {
			data.MostAll = max(data.MostAll, c.Sent+c.Failed+c.Warned)
		}
		if data.Failures, err = messages.Failures(ctx, p.env.ID, since, 10); err != nil {
			return err
		}
		return p.render("overview", "overview", "Overview", data)
	}
}
