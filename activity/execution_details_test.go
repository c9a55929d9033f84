package activity

import (
	"net/http"
	"testing"

	"github.com/matryer/is"
)

func TestExecutionDetails(t *testing.T) {
	h := newHarness(t)
	env := h.App.Development.ID
	wfID := h.wf.add(t, env, "welcome", nil,
		step("inbox", "in_app", map[string]any{"body": "Hi"}),
		step("mail", "email", map[string]any{"subject": "Hi", "body": "Hello"}))
	tx := h.trigger(t, `{"name":"welcome","to":["ada","bob"]}`)
	got := h.waitStatuses(t, tx, "trigger:completed", "in_app:completed", "email:completed")
	ids := map[string]string{}
	for _, n := range got {
		ids[n.Subscriber.SubscriberID] = n.ID
	}
	type detail struct {
		ID                     string  `json:"_id"`
		OrganizationID         string  `json:"_organizationId"`
		EnvironmentID          string  `json:"_environmentId"`
		JobID                  string  `json:"_jobId"`
		NotificationID         string  `json:"_notificationId"`
		NotificationTemplateID string  `json:"_notificationTemplateId"`
		SubscriberID           string  `json:"_subscriberId"`
		ProviderID             string  `json:"providerId"`
		TransactionID          string  `json:"transactionId"`
		Channel                string  `json:"channel"`
		Detail                 string  `json:"detail"`
		Source                 string  `json:"source"`
		Status                 string  `json:"status"`
		IsTest                 bool    `json:"isTest"`
		IsRetry                bool    `json:"isRetry"`
		CreatedAt              string  `json:"createdAt"`
		Raw                    *string `json:"raw"`
	}

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		var list []detail
		res := h.Dev.Do(t, "GET", "/v1/execution-details?notificationId="+ids["ada"]+"&subscriberId=ada", "")
		is.Equal(res.Status, http.StatusOK) // answered
		res.Decode(t, &list)
		var texts []string
		for _, d := range list {
			is.Equal(d.NotificationID, ids["ada"])         // of the notification asked for
			is.Equal(d.NotificationTemplateID, wfID)       // of the workflow triggered
			is.Equal(d.TransactionID, tx)                  // of the trigger
			is.Equal(d.EnvironmentID, env)                 // in the environment
			is.True(d.JobID != "" && d.SubscriberID != "") // with the job and the subscriber's _id
			texts = append(texts, d.Channel+": "+d.Detail)
		}
		is.Equal(texts[0], "trigger: Step queued")           // in the order written, the trigger first
		is.Equal(texts[len(texts)-1], "email: Message sent") // the last step last
	})

	for _, tc := range []struct {
		name, query string
		status      int
		empty       bool
	}{
		{"OK another subscriber's notification has none", "notificationId=" + ids["bob"] + "&subscriberId=ada", 200, true},
		{"OK an unknown notification has none", "notificationId=65f000000000000000000000&subscriberId=ada", 200, true},
		{"ErrNoNotificationId", "subscriberId=ada", 422, false},
		{"ErrNoSubscriberId", "notificationId=" + ids["ada"], 422, false},
		{"ErrUnknownSubscriber", "notificationId=" + ids["ada"] + "&subscriberId=nobody", 404, false},
		{"ErrMalformedNotificationId", "notificationId=nope&subscriberId=ada", 404, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := h.Dev.Do(t, "GET", "/v1/execution-details?"+tc.query, "")
			is.Equal(res.Status, tc.status) // the status
			if tc.empty {
				var list []detail
				res.Decode(t, &list)
				is.Equal(len(list), 0) // nothing of another's
			}
		})
	}
	t.Run("ErrOtherEnvironment", func(t *testing.T) {
		is := is.New(t)
		res := h.Prod.Do(t, "GET", "/v1/execution-details?notificationId="+ids["ada"]+"&subscriberId=ada", "")
		is.Equal(res.Status, http.StatusNotFound) // Development's subscriber is not Production's
	})
}
