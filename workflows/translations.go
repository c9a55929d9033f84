package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// translationResponse is one locale of a resource's translations on the
// wire (docs/content.md, "Translations").
type translationResponse struct {
	ResourceID   string         `json:"resourceId"`
	ResourceType string         `json:"resourceType"`
	Locale       string         `json:"locale"`
	Content      map[string]any `json:"content"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
}

func toTranslationResponse(tr *translation) translationResponse {
	return translationResponse{ResourceID: tr.ResourceID, ResourceType: tr.ResourceType, Locale: tr.Locale,
		Content: tr.Content, CreatedAt: tr.CreatedAt, UpdatedAt: tr.UpdatedAt}
}

// translationPath reads the resourceType, resourceId and, when the route
// has one, locale of a translation route.
func translationPath(r *http.Request) (resourceType, resourceID, locale string, err error) {
	resourceType, resourceID = r.PathValue("resourceType"), r.PathValue("resourceId")
	if resourceType != "workflow" && resourceType != "layout" {
		return "", "", "", platform.InvalidField("resourceType", resourceType, "must be one of workflow, layout")
	}
	if raw := r.PathValue("locale"); raw != "" {
		var ok bool
		if locale, ok = normalLocale(raw); !ok {
			return "", "", "", platform.InvalidField("locale", raw, "must be a locale such as en_US")
		}
	}
	return resourceType, resourceID, locale, nil
}

// handleTranslationPut serves POST /v2/translations: the keys of a
// workflow or layout in a locale, created or replaced.
func handleTranslationPut(store *Store) http.Handler {
	type request struct {
		ResourceID   string         `json:"resourceId" validate:"required,max=128"`
		ResourceType string         `json:"resourceType" validate:"required,oneof=workflow layout"`
		Locale       string         `json:"locale" validate:"required,max=16"`
		Content      map[string]any `json:"content" validate:"required"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		locale, ok := normalLocale(req.Locale)
		if !ok {
			return platform.InvalidField("locale", req.Locale, "must be a locale such as en_US")
		}
		tr, err := store.putTranslation(r.Context(), platform.TenantFrom(r.Context()), req.ResourceType, req.ResourceID, locale, req.Content)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toTranslationResponse(tr))
	})
}

// handleTranslationGet serves GET /v2/translations/{resourceType}/{resourceId}/{locale}.
func handleTranslationGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		typ, id, locale, err := translationPath(r)
		if err != nil {
			return err
		}
		tr, err := store.getTranslation(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, typ, id, locale)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toTranslationResponse(tr))
	})
}

// handleTranslationDelete serves DELETE
// /v2/translations/{resourceType}/{resourceId}/{locale}, and, without the
// locale, the resource's whole group.
func handleTranslationDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		typ, id, locale, err := translationPath(r)
		if err != nil {
			return err
		}
		if err := store.deleteTranslations(r.Context(), platform.TenantFrom(r.Context()), typ, id, locale); err != nil {
			return err
		}
		return platform.NoContent(w)
	})
}

// handleTranslationGroup serves GET
// /v2/translations/group/{resourceType}/{resourceId}: the locales a
// workflow or layout is translated into.
func handleTranslationGroup(store *Store) http.Handler {
	type response struct {
		ResourceID   string   `json:"resourceId"`
		ResourceType string   `json:"resourceType"`
		ResourceName string   `json:"resourceName"`
		Locales      []string `json:"locales"`
		CreatedAt    string   `json:"createdAt"`
		UpdatedAt    string   `json:"updatedAt"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		typ, id, _, err := translationPath(r)
		if err != nil {
			return err
		}
		g, err := store.group(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, typ, id)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, response{ResourceID: g.ResourceID, ResourceType: g.ResourceType,
			ResourceName: g.ResourceName, Locales: g.Locales, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt})
	})
}

// handleMasterGet serves GET /v2/translations/master-json: every
// translation of the environment in one locale (DefaultLocale unless the
// query names one).
func handleMasterGet(store *Store) http.Handler {
	type response struct {
		Workflows map[string]any `json:"workflows"`
		Layouts   map[string]any `json:"layouts"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		raw := q.String("locale")
		locale := DefaultLocale
		if raw != "" {
			var ok bool
			if locale, ok = normalLocale(raw); !ok {
				q.Fail("locale", raw, "must be a locale such as en_US")
			}
		}
		if err := q.Err(); err != nil {
			return err
		}
		wf, ly, err := store.masterJSON(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, locale)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, response{Workflows: wf, Layouts: ly})
	})
}

// importResult is what importing a master JSON answers.
type importResult struct {
	Success    bool     `json:"success"`
	Message    string   `json:"message"`
	Successful []string `json:"successful"`
	Failed     []string `json:"failed"`
}

// importMaster stores each resource's keys of a master JSON in locale: a
// resource that does not exist, or whose keys are not an object, fails
// alone.
func importMaster(r *http.Request, store *Store, locale string, master map[string]any) (importResult, error) {
	res := importResult{Successful: []string{}, Failed: []string{}}
	tenant := platform.TenantFrom(r.Context())
	for _, group := range []struct{ key, typ string }{{"workflows", "workflow"}, {"layouts", "layout"}} {
		resources, _ := master[group.key].(map[string]any)
		for id, v := range resources {
			content, ok := v.(map[string]any)
			if !ok {
				res.Failed = append(res.Failed, id)
				continue
			}
			if _, err := store.putTranslation(r.Context(), tenant, group.typ, id, locale, content); err != nil {
				if e := (*platform.Error)(nil); errors.As(err, &e) && e.Status < 500 {
					res.Failed = append(res.Failed, id)
					continue
				}
				return res, err
			}
			res.Successful = append(res.Successful, id)
		}
	}
	res.Success = len(res.Failed) == 0
	res.Message = fmt.Sprintf("Imported %d resources in %s, %d failed", len(res.Successful), locale, len(res.Failed))
	return res, nil
}

// handleMasterImport serves POST /v2/translations/master-json.
func handleMasterImport(store *Store) http.Handler {
	type request struct {
		Locale     string         `json:"locale" validate:"required,max=16"`
		MasterJSON map[string]any `json:"masterJson" validate:"required"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		locale, ok := normalLocale(req.Locale)
		if !ok {
			return platform.InvalidField("locale", req.Locale, "must be a locale such as en_US")
		}
		res, err := importMaster(r, store, locale, req.MasterJSON)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

// maxUpload bounds a translation upload's body.
const maxUpload = 4 << 20

// uploadedFiles reads a multipart upload's files under the given field
// names, each a JSON object named after its locale (fr_FR.json).
func uploadedFiles(w http.ResponseWriter, r *http.Request, fields ...string) ([]*multipart.FileHeader, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	if err := r.ParseMultipartForm(maxUpload); err != nil {
		if strings.Contains(err.Error(), "too large") {
			return nil, platform.Errorf(http.StatusRequestEntityTooLarge, "Upload is larger than %d bytes", maxUpload)
		}
		return nil, platform.BadRequest("Request body must be multipart/form-data with JSON files")
	}
	var files []*multipart.FileHeader
	for _, f := range fields {
		files = append(files, r.MultipartForm.File[f]...)
	}
	if len(files) == 0 {
		return nil, platform.InvalidField(fields[0], nil, "is required")
	}
	return files, nil
}

// readLocaleFile reads an uploaded locale file: its locale from the name,
// its keys from the JSON object it holds.
func readLocaleFile(fh *multipart.FileHeader) (string, map[string]any, error) {
	name := path.Base(fh.Filename)
	locale, ok := normalLocale(strings.TrimSuffix(name, path.Ext(name)))
	if !ok {
		return "", nil, fmt.Errorf("%s: the file name must be a locale, such as en_US.json", name)
	}
	f, err := fh.Open()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", name, err)
	}
	var content map[string]any
	if err := json.Unmarshal(b, &content); err != nil || content == nil {
		return "", nil, fmt.Errorf("%s: must hold a JSON object", name)
	}
	return locale, content, nil
}

// handleTranslationUpload serves POST /v2/translations/upload: locale
// files (files[] or files) for one resource (resourceId, resourceType).
func handleTranslationUpload(store *Store) http.Handler {
	type response struct {
		TotalFiles        int      `json:"totalFiles"`
		SuccessfulUploads int      `json:"successfulUploads"`
		FailedUploads     int      `json:"failedUploads"`
		Errors            []string `json:"errors"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		files, err := uploadedFiles(w, r, "files[]", "files")
		if err != nil {
			return err
		}
		typ, id := r.FormValue("resourceType"), r.FormValue("resourceId")
		if typ != "workflow" && typ != "layout" {
			return platform.InvalidField("resourceType", typ, "must be one of workflow, layout")
		}
		tenant := platform.TenantFrom(r.Context())
		if _, _, err := store.resource(r.Context(), store.db, tenant.EnvironmentID, typ, id); err != nil {
			return err
		}
		res := response{TotalFiles: len(files), Errors: []string{}}
		for _, fh := range files {
			locale, content, err := readLocaleFile(fh)
			if err == nil {
				_, err = store.putTranslation(r.Context(), tenant, typ, id, locale, content)
			}
			if err != nil {
				res.FailedUploads++
				res.Errors = append(res.Errors, err.Error())
				continue
			}
			res.SuccessfulUploads++
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

// handleMasterUpload serves POST /v2/translations/master-json/upload: a
// master JSON file (file), its locale taken from its name.
func handleMasterUpload(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		files, err := uploadedFiles(w, r, "file")
		if err != nil {
			return err
		}
		locale, master, err := readLocaleFile(files[0])
		if err != nil {
			return platform.InvalidField("file", nil, "%v", err)
		}
		res, err := importMaster(r, store, locale, master)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}
