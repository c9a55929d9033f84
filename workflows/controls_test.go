package workflows_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"
)

func TestWorkflow_ControlValues(t *testing.T) {
	srv, _ := newServer(t, nil)
	for _, tc := range []struct {
		name, kind, values string
		field              string // "" when the values are accepted
	}{
		{"OK in_app absolute url", "in_app", `{"body":"b","redirect":{"url":"https://x.test/a?b=1","target":"_self"}}`, ""},
		{"OK in_app path url", "in_app", `{"body":"b","redirect":{"url":"/inbox"}}`, ""},
		{"OK in_app variable url", "in_app", `{"body":"b","redirect":{"url":"{{payload.url}}"}}`, ""},
		{"OK in_app every target", "in_app", `{"body":"b","primaryAction":{"label":"a","redirect":{"target":"_unfencedTop"}},"secondaryAction":{"redirect":{"target":"_parent"}}}`, ""},
		{"OK in_app avatar path", "in_app", `{"body":"b","avatar":"/a.png"}`, ""},
		{"OK in_app incomplete is saved", "in_app", `{}`, ""},
		{"ErrInAppRedirectURL", "in_app", `{"body":"b","redirect":{"url":"not a url"}}`, "redirect.url"},
		{"ErrInAppRedirectTarget", "in_app", `{"body":"b","redirect":{"target":"_new"}}`, "redirect.target"},
		{"ErrInAppActionTarget", "in_app", `{"body":"b","primaryAction":{"redirect":{"target":"self"}}}`, "primaryAction.redirect.target"},
		{"ErrInAppActionURL", "in_app", `{"body":"b","secondaryAction":{"redirect":{"url":"ftp:"}}}`, "secondaryAction.redirect.url"},
		{"ErrInAppActionLabel", "in_app", `{"body":"b","primaryAction":{"label":5}}`, "primaryAction.label"},
		{"ErrInAppRedirectType", "in_app", `{"body":"b","redirect":"https://x.test"}`, "redirect"},
		{"ErrInAppAvatar", "in_app", `{"body":"b","avatar":"avatar.png"}`, "avatar"},
		{"ErrInAppBodyType", "in_app", `{"body":42}`, "body"},
		{"ErrInAppSanitization", "in_app", `{"body":"b","disableOutputSanitization":"yes"}`, "disableOutputSanitization"},
		{"ErrInAppData", "in_app", `{"body":"b","data":[1]}`, "data"},
		{"ErrSkip", "sms", `{"body":"b","skip":true}`, "skip"},
		{"OK email block", "email", `{"subject":"s","body":"{}","editorType":"block","layoutId":"lay"}`, ""},
		{"OK email html no layout", "email", `{"subject":"s","body":"<p/>","editorType":"html","layoutId":null}`, ""},
		{"OK email incomplete is saved", "email", `{"subject":""}`, ""},
		{"ErrEmailEditorType", "email", `{"subject":"s","body":"b","editorType":"markdown"}`, "editorType"},
		{"ErrEmailSubjectType", "email", `{"subject":["s"],"body":"b"}`, "subject"},
		{"ErrEmailLayoutType", "email", `{"subject":"s","body":"b","layoutId":3}`, "layoutId"},
		{"ErrSmsBody", "sms", `{"body":{"text":"x"}}`, "body"},
		{"ErrChatBody", "chat", `{"body":true}`, "body"},
		{"ErrPushSubject", "push", `{"subject":1,"body":"b"}`, "subject"},
		{"OK delay regular", "delay", `{"type":"regular","amount":30,"unit":"seconds"}`, ""},
		{"OK delay timed", "delay", `{"type":"timed","cron":"0 9 * * 1"}`, ""},
		{"ErrDelayType", "delay", `{"type":"scheduled","amount":1,"unit":"days"}`, "type"},
		{"ErrDelayUnit", "delay", `{"amount":1,"unit":"years"}`, "unit"},
		{"ErrDelayAmountType", "delay", `{"amount":"5","unit":"days"}`, "amount"},
		{"ErrDelayCronEmpty", "delay", `{"type":"timed","cron":""}`, "cron"},
		{"OK digest regular", "digest", `{"type":"regular","amount":1,"unit":"weeks","digestKey":"payload.thread"}`, ""},
		{"OK digest look-back", "digest", `{"amount":10,"unit":"minutes","lookBackWindow":{"amount":5,"unit":"minutes"}}`, ""},
		{"OK digest timed", "digest", `{"type":"timed","cron":"0 0 * * *"}`, ""},
		{"ErrDigestAmountZero", "digest", `{"amount":0,"unit":"hours"}`, "amount"},
		{"ErrDigestUnit", "digest", `{"amount":1,"unit":"fortnights"}`, "unit"},
		{"ErrDigestType", "digest", `{"type":"backoff","amount":1,"unit":"hours"}`, "type"},
		{"ErrDigestLookBackUnitMissing", "digest", `{"amount":1,"unit":"hours","lookBackWindow":{"amount":5}}`, "lookBackWindow.unit"},
		{"ErrDigestLookBackAmountMissing", "digest", `{"amount":1,"unit":"hours","lookBackWindow":{"unit":"hours"}}`, "lookBackWindow.amount"},
		{"ErrDigestLookBackType", "digest", `{"amount":1,"unit":"hours","lookBackWindow":5}`, "lookBackWindow"},
		{"ErrDigestCronEmpty", "digest", `{"type":"timed","cron":""}`, "cron"},
		{"ErrDigestKeyType", "digest", `{"digestKey":7}`, "digestKey"},
		{"OK throttle", "throttle", `{"type":"dynamic","amount":1,"unit":"hours","threshold":5,"dynamicKey":"payload.window"}`, ""},
		{"ErrThrottleThreshold", "throttle", `{"threshold":0}`, "threshold"},
		{"OK custom anything", "custom", `{"a":{"b":[1,2]}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			body := fmt.Sprintf(`{"name":"c","steps":[{"name":"first","type":"sms"},{"name":"s","type":%q,"controlValues":%s}]}`, tc.kind, tc.values)
			res := srv.Dev.Do(t, "POST", "/v2/workflows", body)
			if tc.field == "" {
				is.Equal(res.Status, 201) // accepted and saved
				var w wfResponse
				res.Decode(t, &w)
				is.Equal(len(w.Steps[1].Controls.Values) > 0, tc.values != "{}") // values stored as sent
				return
			}
			is.Equal(res.Status, 422) // rejected
			var e struct {
				Errors map[string]struct {
					Messages []string `json:"messages"`
				} `json:"errors"`
			}
			res.Decode(t, &e)
			key := "steps.1.controlValues." + tc.field
			is.True(len(e.Errors[key].Messages) > 0) // the error is keyed by the control's JSON path
			is.Equal(len(e.Errors), 1)               // and nothing else
		})
	}
	t.Run("ErrOnUpdateToo", func(t *testing.T) {
		is := is.New(t)
		mustCreate(t, srv.Dev, `{"name":"u","workflowId":"upd","steps":[]}`)
		res := srv.Dev.Do(t, "PUT", "/v2/workflows/upd", `{"name":"u","steps":[{"name":"d","type":"delay","controlValues":{"unit":"eons"}}]}`)
		is.Equal(res.Status, 422) // update validates control values
		res = srv.Dev.Do(t, "GET", "/v2/workflows/upd", "")
		var w wfResponse
		res.Decode(t, &w)
		is.Equal(len(w.Steps), 0) // nothing was written
	})
}
