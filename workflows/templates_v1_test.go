package workflows_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// group is a notification group as the wire shows it.
type group struct {
	ID             string `json:"_id"`
	Name           string `json:"name"`
	EnvironmentID  string `json:"_environmentId"`
	OrganizationID string `json:"_organizationId"`
}

// templateV1 is a workflow in the v1 shape, declared here so a renamed
// field fails the tests.
type templateV1 struct {
	ID                  string          `json:"_id"`
	Name                string          `json:"name"`
	Description         string          `json:"description"`
	Active              bool            `json:"active"`
	Draft               bool            `json:"draft"`
	Critical            bool            `json:"critical"`
	Tags                []string        `json:"tags"`
	NotificationGroupID string          `json:"_notificationGroupId"`
	PreferenceSettings  map[string]bool `json:"preferenceSettings"`
	Triggers            []struct {
		Type       string `json:"type"`
		Identifier string `json:"identifier"`
	} `json:"triggers"`
	NotificationGroup *group `json:"notificationGroup"`
	Steps             []struct {
		ID         string `json:"_id"`
		TemplateID string `json:"_templateId"`
		Active     bool   `json:"active"`
		Template   struct {
			Type    string `json:"type"`
			Subject string `json:"subject"`
			Title   string `json:"title"`
			Content string `json:"content"`
		} `json:"template"`
	} `json:"steps"`
	CreatedAt string `json:"createdAt"`
}

func mustGroup(t *testing.T, c platformtest.Client, name string) group {
	t.Helper()
	res := c.Do(t, "POST", "/v1/notification-groups", `{"name":"`+name+`"}`)
	if res.Status != 201 {
		t.Fatalf("create group: %d %s", res.Status, res.Body)
	}
	var g group
	res.Decode(t, &g)
	return g
}

func defaultGroup(t *testing.T, c platformtest.Client) group {
	t.Helper()
	var list []group
	c.Do(t, "GET", "/v1/notification-groups", "").Decode(t, &list)
	if len(list) == 0 || list[0].Name != "General" {
		t.Fatalf("the default group is not first: %+v", list)
	}
	return list[0]
}

func TestNotificationGroups_CRUD(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	c := srv.Dev
	general := defaultGroup(t, c)

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		g := mustGroup(t, c, "Marketing")
		is.Equal(g.Name, "Marketing")                   // named as sent
		is.True(g.EnvironmentID != "")                  // scoped to the environment
		is.Equal(mustGroup(t, c, "Marketing").ID, g.ID) // the same name answers the same group

		var got group
		res := c.Do(t, "GET", "/v1/notification-groups/"+g.ID, "")
		is.Equal(res.Status, 200) // read back
		res.Decode(t, &got)
		is.Equal(got, g) // the same group

		res = c.Do(t, "PATCH", "/v1/notification-groups/"+g.ID, `{"name":"Promotions"}`)
		is.Equal(res.Status, 200) // renamed
		res.Decode(t, &got)
		is.Equal(got.Name, "Promotions") // the new name

		var list []group
		c.Do(t, "GET", "/v1/notification-groups", "").Decode(t, &list)
		is.Equal(len(list), 2) // General and Promotions

		res = c.Do(t, "DELETE", "/v1/notification-groups/"+g.ID, "")
		is.Equal(res.Status, 200)                                                                 // deleted
		is.Equal(strings.TrimSpace(string(res.Body)), `{"acknowledged":true,"status":"deleted"}`) // as the reference answers
		is.Equal(c.Do(t, "GET", "/v1/notification-groups/"+g.ID, "").Status, 404)                 // gone
	})

	t.Run("OtherEnvironmentInvisible", func(t *testing.T) {
		is := is.New(t)
		g := mustGroup(t, c, "Dev only")
		is.Equal(srv.Prod.Do(t, "GET", "/v1/notification-groups/"+g.ID, "").Status, 404)    // not Production's
		is.Equal(srv.Prod.Do(t, "DELETE", "/v1/notification-groups/"+g.ID, "").Status, 404) // nor deletable from there
	})

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"ErrCreateNoName", "POST", "/v1/notification-groups", `{}`, 422},
		{"ErrCreateNameNotString", "POST", "/v1/notification-groups", `{"name":5}`, 422},
		{"ErrCreateNotJSON", "POST", "/v1/notification-groups", `{`, 400},
		{"ErrGetUnknown", "GET", "/v1/notification-groups/65f000000000000000000000", "", 404},
		{"ErrGetMalformedID", "GET", "/v1/notification-groups/nope", "", 404},
		{"ErrRenameUnknown", "PATCH", "/v1/notification-groups/65f000000000000000000000", `{"name":"X"}`, 404},
		{"ErrRenameEmpty", "PATCH", "/v1/notification-groups/" + general.ID, `{"name":""}`, 422},
		{"ErrRenameDefault", "PATCH", "/v1/notification-groups/" + general.ID, `{"name":"Other"}`, 409},
		{"ErrDeleteDefault", "DELETE", "/v1/notification-groups/" + general.ID, "", 409},
		{"ErrDeleteUnknown", "DELETE", "/v1/notification-groups/65f000000000000000000000", "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status) // refused with the right status
		})
	}

	t.Run("ErrRenameTaken", func(t *testing.T) {
		is := is.New(t)
		a, _ := mustGroup(t, c, "A"), mustGroup(t, c, "B")
		is.Equal(c.Do(t, "PATCH", "/v1/notification-groups/"+a.ID, `{"name":"B"}`).Status, 409) // another group has the name
	})

	t.Run("ErrDeleteInUse", func(t *testing.T) {
		is := is.New(t)
		g := mustGroup(t, c, "Busy")
		res := c.Do(t, "POST", "/v1/notification-templates", `{"name":"Busy one","notificationGroupId":"`+g.ID+`"}`)
		is.Equal(res.Status, 201)                                                    // a workflow in the group
		is.Equal(c.Do(t, "DELETE", "/v1/notification-groups/"+g.ID, "").Status, 409) // a live workflow keeps it
		var w templateV1
		res.Decode(t, &w)
		is.Equal(c.Do(t, "DELETE", "/v1/notification-templates/"+w.ID, "").Status, 200) // the workflow goes
		is.Equal(c.Do(t, "DELETE", "/v1/notification-groups/"+g.ID, "").Status, 200)    // then the group can
	})
	is.True(general.ID != "") // the default group exists from the start
}

func TestNotificationTemplatesV1_CRUD(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	c := srv.Dev
	general := defaultGroup(t, c)
	promo := mustGroup(t, c, "Promotions")

	res := c.Do(t, "POST", "/v1/notification-templates", `{"name":"Welcome","identifier":"welcome","notificationGroupId":"`+general.ID+`",
		"description":"Says hi","tags":["onboarding"],"active":true,"critical":true,"preferenceSettings":{"email":false},
		"steps":[{"template":{"type":"in_app","content":"Hi {{subscriber.firstName}}"}},
		         {"name":"Mail","template":{"type":"email","subject":"Welcome","content":[{"type":"text","content":"Line 1"},{"type":"text","content":"Line 2"}]}},
		         {"template":{"type":"push","title":"Hey","content":"Pushed"}},
		         {"template":{"type":"delay"},"metadata":{"amount":5,"unit":"minutes","type":"regular"}}]}`)
	is.Equal(res.Status, 201) // created
	var w templateV1
	res.Decode(t, &w)
	is.Equal(w.Name, "Welcome")                                          // named
	is.True(w.Active && !w.Draft)                                        // active, so no draft
	is.True(w.Critical)                                                  // critical kept
	is.Equal(w.PreferenceSettings["email"], false)                       // email off by default
	is.Equal(w.PreferenceSettings["in_app"], true)                       // the rest on
	is.Equal(w.NotificationGroupID, general.ID)                          // in the group named
	is.Equal(w.NotificationGroup.Name, "General")                        // the group embedded
	is.Equal(w.Triggers[0].Identifier, "welcome")                        // the identifier is the workflowId
	is.Equal(len(w.Steps), 4)                                            // every step
	is.Equal(w.Steps[0].Template.Content, "Hi {{subscriber.firstName}}") // in-app content kept
	is.Equal(w.Steps[1].Template.Subject, "Welcome")                     // email subject kept
	is.Equal(w.Steps[1].Template.Content, "Line 1\nLine 2")              // the editor's blocks joined
	is.Equal(w.Steps[2].Template.Title, "Hey")                           // push title kept
	is.Equal(w.Steps[3].Template.Type, "delay")                          // the delay step

	// The v2 route reads what v1 wrote.
	var v2 wfResponse
	c.Do(t, "GET", "/v2/workflows/welcome", "").Decode(t, &v2)
	is.Equal(v2.Steps[1].ControlValues["subject"], "Welcome") // the same workflow
	is.Equal(v2.Steps[3].ControlValues["amount"], 5.0)        // the delay's amount from its metadata

	var got templateV1
	res = c.Do(t, "GET", "/v1/notification-templates/"+w.ID, "")
	is.Equal(res.Status, 200) // read by _id
	res.Decode(t, &got)
	is.Equal(got.ID, w.ID)                                                         // the same workflow
	is.Equal(c.Do(t, "GET", "/v1/notification-templates/welcome", "").Status, 200) // and by identifier

	res = c.Do(t, "PUT", "/v1/notification-templates/"+w.ID, `{"description":"Changed","notificationGroupId":"`+promo.ID+`",
		"steps":[{"_id":"`+w.Steps[0].ID+`","template":{"type":"in_app","content":"Hello"}}]}`)
	is.Equal(res.Status, 200) // updated
	res.Decode(t, &got)
	is.Equal(got.Description, "Changed")             // description changed
	is.Equal(got.Name, "Welcome")                    // name kept
	is.Equal(got.NotificationGroupID, promo.ID)      // moved to another group
	is.Equal(len(got.Steps), 1)                      // steps replaced
	is.Equal(got.Steps[0].ID, w.Steps[0].ID)         // the step sent with its _id keeps it
	is.Equal(got.Steps[0].Template.Content, "Hello") // with its new content
	c.Do(t, "GET", "/v1/notification-templates/"+w.ID, "").Decode(t, &got)
	is.Equal(got.NotificationGroupID, promo.ID)        // the move is stored
	is.Equal(got.NotificationGroup.Name, "Promotions") // with the group's name

	res = c.Do(t, "PUT", "/v1/notification-templates/"+w.ID+"/status", `{"active":false}`)
	is.Equal(res.Status, 200) // status changed
	res.Decode(t, &got)
	is.True(!got.Active && got.Draft) // off, so a draft

	var page struct {
		TotalCount int          `json:"totalCount"`
		Data       []templateV1 `json:"data"`
		PageSize   int          `json:"pageSize"`
		Page       int          `json:"page"`
	}
	c.Do(t, "POST", "/v1/notification-templates", `{"name":"Second","notificationGroupId":"`+general.ID+`"}`)
	res = c.Do(t, "GET", "/v1/notification-templates?page=0&limit=1", "")
	is.Equal(res.Status, 200) // listed
	res.Decode(t, &page)
	is.Equal(page.TotalCount, 2)          // both counted
	is.Equal(page.PageSize, 1)            // one on the page
	is.Equal(page.Data[0].Name, "Second") // newest first
	c.Do(t, "GET", "/v1/notification-templates?page=1&limit=1", "").Decode(t, &page)
	is.Equal(page.Page, 1)                 // the second page
	is.Equal(page.Data[0].Name, "Welcome") // the older one
	c.Do(t, "GET", "/v1/notification-templates?query=welc", "").Decode(t, &page)
	is.Equal(page.TotalCount, 1) // query matches the name

	res = c.Do(t, "DELETE", "/v1/notification-templates/"+w.ID, "")
	is.Equal(res.Status, 200)                                                    // deleted
	is.Equal(strings.TrimSpace(string(res.Body)), "true")                        // answered true
	is.Equal(c.Do(t, "GET", "/v1/notification-templates/"+w.ID, "").Status, 404) // gone

	t.Run("DraftMeansInactive", func(t *testing.T) {
		is := is.New(t)
		var d templateV1
		c.Do(t, "POST", "/v1/notification-templates", `{"name":"Drafted","draft":false,"notificationGroupId":"`+general.ID+`"}`).Decode(t, &d)
		is.True(d.Active) // draft false is active
		c.Do(t, "POST", "/v1/notification-templates", `{"name":"Plain","notificationGroupId":"`+general.ID+`"}`).Decode(t, &d)
		is.True(!d.Active && d.Draft) // inactive unless asked
	})

	t.Run("OtherEnvironmentInvisible", func(t *testing.T) {
		is := is.New(t)
		is.Equal(srv.Prod.Do(t, "GET", "/v1/notification-templates/welcome", "").Status, 404)                                             // not Production's
		is.Equal(srv.Prod.Do(t, "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"`+general.ID+`"}`).Status, 422) // nor its group
	})

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"ErrCreateNoName", "POST", "/v1/notification-templates", `{"notificationGroupId":"` + general.ID + `"}`, 422},
		{"ErrCreateNoGroup", "POST", "/v1/notification-templates", `{"name":"X"}`, 422},
		{"ErrCreateGroupNotAnID", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"nope"}`, 422},
		{"ErrCreateUnknownGroup", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"65f000000000000000000000"}`, 422},
		{"ErrCreateBadStepType", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"` + general.ID + `","steps":[{"template":{"type":"fax"}}]}`, 422},
		{"ErrCreateNoStepTemplate", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"` + general.ID + `","steps":[{}]}`, 422},
		{"ErrCreateBadContent", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"` + general.ID + `","steps":[{"template":{"type":"sms","content":5}}]}`, 422},
		{"ErrCreateBadDelay", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"` + general.ID + `","steps":[{"template":{"type":"delay"},"metadata":{"amount":0,"unit":"years"}}]}`, 422},
		{"ErrCreateBadPreference", "POST", "/v1/notification-templates", `{"name":"X","notificationGroupId":"` + general.ID + `","preferenceSettings":{"fax":true}}`, 422},
		{"ErrCreateTakenIdentifier", "POST", "/v1/notification-templates", `{"name":"X","identifier":"drafted","notificationGroupId":"` + general.ID + `"}`, 409},
		{"ErrCreateNotJSON", "POST", "/v1/notification-templates", `[`, 400},
		{"ErrListBadLimit", "GET", "/v1/notification-templates?limit=101", "", 422},
		{"ErrListBadPage", "GET", "/v1/notification-templates?page=-1", "", 422},
		{"ErrGetUnknown", "GET", "/v1/notification-templates/nothing", "", 404},
		{"ErrUpdateUnknown", "PUT", "/v1/notification-templates/nothing", `{"name":"X"}`, 404},
		{"ErrUpdateUnknownGroup", "PUT", "/v1/notification-templates/drafted", `{"notificationGroupId":"65f000000000000000000000"}`, 422},
		{"ErrUpdateBadTags", "PUT", "/v1/notification-templates/drafted", `{"tags":"x"}`, 422},
		{"ErrDeleteUnknown", "DELETE", "/v1/notification-templates/nothing", "", 404},
		{"ErrStatusMissing", "PUT", "/v1/notification-templates/drafted/status", `{}`, 422},
		{"ErrStatusNotBool", "PUT", "/v1/notification-templates/drafted/status", `{"active":"yes"}`, 422},
		{"ErrStatusUnknown", "PUT", "/v1/notification-templates/nothing/status", `{"active":true}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status) // refused with the right status
		})
	}
}
