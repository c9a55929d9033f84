package workflows_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform/platformtest"
)

// translationBody is one locale of translations as the wire shows it.
type translationBody struct {
	ResourceID   string         `json:"resourceId"`
	ResourceType string         `json:"resourceType"`
	Locale       string         `json:"locale"`
	Content      map[string]any `json:"content"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
}

// upload posts files (name → content) as multipart form data, with fields.
func upload(t *testing.T, srv *platformtest.Server, path string, fields map[string]string, field string, files map[string]string) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for name, content := range files {
		fw, _ := mw.CreateFormFile(field, name)
		fw.Write([]byte(content))
	}
	mw.Close()
	req, _ := http.NewRequest("POST", srv.URL+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "ApiKey "+platformtest.DevKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestTranslations_CRUD(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	c := srv.Dev
	mustCreate(t, c, `{"name":"Welcome","workflowId":"welcome","isTranslationEnabled":true,"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"{{t.hello}}"}}]}`)

	res := c.Do(t, "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"fr-fr","content":{"hello":"Bonjour","nested":{"a":"b"}}}`)
	is.Equal(res.Status, http.StatusOK) // created
	var tr translationBody
	res.Decode(t, &tr)
	is.Equal(tr.Locale, "fr_FR")             // the locale written language_REGION
	is.Equal(tr.ResourceID, "welcome")       // the workflowId
	is.Equal(tr.Content["hello"], "Bonjour") // the keys
	res = c.Do(t, "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"fr_FR","content":{"hello":"Salut"}}`)
	is.Equal(res.Status, http.StatusOK) // replaced
	var replaced translationBody
	c.Do(t, "GET", "/v2/translations/workflow/welcome/fr_FR", "").Decode(t, &replaced)
	is.Equal(replaced.Content["hello"], "Salut") // the new keys
	is.Equal(replaced.Content["nested"], nil)    // replaced, not merged

	var group struct {
		ResourceID   string   `json:"resourceId"`
		ResourceName string   `json:"resourceName"`
		Locales      []string `json:"locales"`
	}
	is.Equal(c.Do(t, "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"en_US","content":{"hello":"Hello"}}`).Status, 200) // a second locale
	c.Do(t, "GET", "/v2/translations/group/workflow/welcome", "").Decode(t, &group)
	is.Equal(group.ResourceName, "Welcome")                   // the workflow's name
	is.Equal(strings.Join(group.Locales, ","), "en_US,fr_FR") // both locales

	var master struct {
		Workflows map[string]map[string]any `json:"workflows"`
		Layouts   map[string]any            `json:"layouts"`
	}
	c.Do(t, "GET", "/v2/translations/master-json?locale=fr_FR", "").Decode(t, &master)
	is.Equal(master.Workflows["welcome"]["hello"], "Salut") // keyed by workflowId
	res = c.Do(t, "POST", "/v2/translations/master-json", `{"locale":"de_DE","masterJson":{"workflows":{"welcome":{"hello":"Hallo"},"nope":{"x":"y"}}}}`)
	is.Equal(res.Status, http.StatusOK) // imported
	var imported struct {
		Success    bool     `json:"success"`
		Successful []string `json:"successful"`
		Failed     []string `json:"failed"`
	}
	res.Decode(t, &imported)
	is.Equal(imported.Successful, []string{"welcome"}) // the workflow that exists
	is.Equal(imported.Failed, []string{"nope"})        // and not the other
	is.True(!imported.Success)                         // so not wholly a success

	up := upload(t, srv, "/v2/translations/upload", map[string]string{"resourceId": "welcome", "resourceType": "workflow"}, "files",
		map[string]string{"es_ES.json": `{"hello":"Hola"}`, "bad.json": `{"hello":"x"}`})
	is.Equal(up.StatusCode, http.StatusOK) // uploaded
	c.Do(t, "GET", "/v2/translations/workflow/welcome/es_ES", "").Decode(t, &tr)
	is.Equal(tr.Content["hello"], "Hola") // the file's keys, its locale from its name
	up = upload(t, srv, "/v2/translations/master-json/upload", nil, "file", map[string]string{"it_IT.json": `{"workflows":{"welcome":{"hello":"Ciao"}}}`})
	is.Equal(up.StatusCode, http.StatusOK) // a master file
	c.Do(t, "GET", "/v2/translations/workflow/welcome/it_IT", "").Decode(t, &tr)
	is.Equal(tr.Content["hello"], "Ciao") // imported in its locale

	is.Equal(c.Do(t, "DELETE", "/v2/translations/workflow/welcome/fr_FR", "").Status, http.StatusNoContent) // one locale deleted
	is.Equal(c.Do(t, "GET", "/v2/translations/workflow/welcome/fr_FR", "").Status, http.StatusNotFound)     // gone
	is.Equal(c.Do(t, "DELETE", "/v2/translations/workflow/welcome", "").Status, http.StatusNoContent)       // the group deleted
	is.Equal(c.Do(t, "GET", "/v2/translations/group/workflow/welcome", "").Status, http.StatusNotFound)     // no locale left
}

func TestTranslations_Errors(t *testing.T) {
	srv, _ := newServer(t, nil)
	c := srv.Dev
	mustCreate(t, c, `{"name":"Welcome","workflowId":"welcome","steps":[]}`)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"ErrNoResource", "POST", "/v2/translations", `{"resourceType":"workflow","locale":"en_US","content":{}}`, 422, "resourceId"},
		{"ErrResourceType", "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"step","locale":"en_US","content":{}}`, 422, "resourceType"},
		{"ErrLocale", "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"english!","content":{}}`, 422, "locale"},
		{"ErrContent", "POST", "/v2/translations", `{"resourceId":"welcome","resourceType":"workflow","locale":"en_US","content":"hi"}`, 422, "content"},
		{"ErrUnknownWorkflow", "POST", "/v2/translations", `{"resourceId":"nope","resourceType":"workflow","locale":"en_US","content":{}}`, 404, "nope"},
		{"ErrUnknownLayout", "POST", "/v2/translations", `{"resourceId":"nope","resourceType":"layout","locale":"en_US","content":{}}`, 404, "nope"},
		{"ErrGetMissing", "GET", "/v2/translations/workflow/welcome/en_US", "", 404, "en_US"},
		{"ErrGetType", "GET", "/v2/translations/step/welcome/en_US", "", 422, "resourceType"},
		{"ErrGetLocale", "GET", "/v2/translations/workflow/welcome/x", "", 422, "locale"},
		{"ErrDeleteMissing", "DELETE", "/v2/translations/workflow/welcome/en_US", "", 404, "welcome"},
		{"ErrGroupMissing", "GET", "/v2/translations/group/workflow/welcome", "", 404, "welcome"},
		{"ErrMasterLocale", "GET", "/v2/translations/master-json?locale=x", "", 422, "locale"},
		{"ErrImportNoLocale", "POST", "/v2/translations/master-json", `{"masterJson":{}}`, 422, "locale"},
		{"ErrUploadNotMultipart", "POST", "/v2/translations/upload", `{}`, 400, "multipart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, tc.method, tc.path, tc.body)
			is.Equal(res.Status, tc.status)                      // the status
			is.True(strings.Contains(string(res.Body), tc.want)) // the message names the problem
		})
	}
	t.Run("ErrUploadNoFiles", func(t *testing.T) {
		is := is.New(t)
		res := upload(t, srv, "/v2/translations/upload", map[string]string{"resourceId": "welcome", "resourceType": "workflow"}, "other", map[string]string{"en_US.json": `{}`})
		is.Equal(res.StatusCode, 422) // files are required
	})
	t.Run("ErrUploadUnknownWorkflow", func(t *testing.T) {
		is := is.New(t)
		res := upload(t, srv, "/v2/translations/upload", map[string]string{"resourceId": "nope", "resourceType": "workflow"}, "files", map[string]string{"en_US.json": `{}`})
		is.Equal(res.StatusCode, 404) // the workflow must exist
	})
}
