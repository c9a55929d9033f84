package provider

import (
	"encoding/base64"
	"strings"
)

// Attachment is a file an email carries (docs/attachments.md).
type Attachment struct {
	Name    string // the file name the recipient sees
	MIME    string // its content type
	Content []byte
	// CID is the Content-ID an HTML body refers to as cid:…; "" for none.
	CID string
	// Disposition is "inline" or "attachment"; "" is inline when the file
	// has a CID, an attachment otherwise.
	Disposition string
}

// Inline reports whether the file is shown in the body rather than
// offered as a download.
func (a Attachment) Inline() bool {
	return a.Disposition == "inline" || a.Disposition == "" && a.CID != ""
}

func (a Attachment) base64() string { return base64.StdEncoding.EncodeToString(a.Content) }

// disposition is "inline" or "attachment", as most APIs spell it.
func (a Attachment) disposition() string {
	if a.Inline() {
		return "inline"
	}
	return "attachment"
}

// SendsAttachments reports whether Herald sends files through providerID;
// a delivery through another says it sent the email without them.
func SendsAttachments(providerID string) bool { return catalog[providerID].files }

// jsonAttachers put an email's files into the JSON body of the providers
// whose send builds one, each in its API's documented shape
// (docs/providers.md, "Attachments"). merge wraps those providers' send
// with them.
var jsonAttachers = map[string]func(body map[string]any, as []Attachment){
	"sendgrid": func(body map[string]any, as []Attachment) {
		body["attachments"] = eachFile(as, func(a Attachment) map[string]any {
			f := map[string]any{"content": a.base64(), "filename": a.Name, "type": a.MIME, "disposition": a.disposition()}
			if a.CID != "" {
				f["content_id"] = a.CID
			}
			return f
		})
	},
	"postmark": func(body map[string]any, as []Attachment) {
		body["Attachments"] = eachFile(as, func(a Attachment) map[string]any {
			f := map[string]any{"Name": a.Name, "Content": a.base64(), "ContentType": a.MIME}
			if a.CID != "" {
				f["ContentID"] = "cid:" + a.CID
			}
			return f
		})
	},
	"resend": func(body map[string]any, as []Attachment) {
		body["attachments"] = eachFile(as, func(a Attachment) map[string]any {
			f := map[string]any{"filename": a.Name, "content": a.base64(), "content_type": a.MIME}
			if a.CID != "" {
				f["content_id"] = a.CID
			}
			return f
		})
	},
	"mailjet": func(body map[string]any, as []Attachment) {
		msg := body["Messages"].([]any)[0].(map[string]any)
		var files, inline []map[string]any
		for _, a := range as {
			f := map[string]any{"ContentType": a.MIME, "Filename": a.Name, "Base64Content": a.base64()}
			if a.Inline() && a.CID != "" {
				f["ContentID"] = a.CID
				inline = append(inline, f)
				continue
			}
			files = append(files, f)
		}
		setFiles(msg, "Attachments", files)
		setFiles(msg, "InlinedAttachments", inline)
	},
	"sendinblue": func(body map[string]any, as []Attachment) {
		body["attachment"] = eachFile(as, func(a Attachment) map[string]any {
			return map[string]any{"name": a.Name, "content": a.base64()}
		})
	},
	"sparkpost": func(body map[string]any, as []Attachment) {
		content := body["content"].(map[string]any)
		var files, images []map[string]any
		for _, a := range as {
			if a.Inline() && a.CID != "" {
				images = append(images, map[string]any{"name": a.CID, "type": a.MIME, "data": a.base64()})
				continue
			}
			files = append(files, map[string]any{"name": a.Name, "type": a.MIME, "data": a.base64()})
		}
		setFiles(content, "attachments", files)
		setFiles(content, "inline_images", images)
	},
	"mailersend": func(body map[string]any, as []Attachment) {
		body["attachments"] = eachFile(as, func(a Attachment) map[string]any {
			f := map[string]any{"content": a.base64(), "filename": a.Name, "disposition": a.disposition()}
			if a.CID != "" {
				f["id"] = a.CID
			}
			return f
		})
	},
	"mandrill": func(body map[string]any, as []Attachment) {
		msg := body["message"].(map[string]any)
		var files, images []map[string]any
		for _, a := range as {
			if a.Inline() && a.CID != "" {
				images = append(images, map[string]any{"type": a.MIME, "name": a.CID, "content": a.base64()})
				continue
			}
			files = append(files, map[string]any{"type": a.MIME, "name": a.Name, "content": a.base64()})
		}
		setFiles(msg, "attachments", files)
		setFiles(msg, "images", images)
	},
	"mailtrap": func(body map[string]any, as []Attachment) {
		body["attachments"] = eachFile(as, func(a Attachment) map[string]any {
			f := map[string]any{"content": a.base64(), "filename": a.Name, "type": a.MIME, "disposition": a.disposition()}
			if a.CID != "" {
				f["content_id"] = a.CID
			}
			return f
		})
	},
	"netcore": func(body map[string]any, as []Attachment) {
		p := body["personalizations"].([]any)[0].(map[string]any)
		p["attachments"] = eachFile(as, func(a Attachment) map[string]any {
			return map[string]any{"name": a.Name, "content": a.base64()}
		})
	},
	"email-webhook": func(body map[string]any, as []Attachment) {
		body["attachments"] = eachFile(as, func(a Attachment) map[string]any {
			f := map[string]any{"name": a.Name, "mime": a.MIME, "content": a.base64(), "disposition": a.disposition()}
			if a.CID != "" {
				f["cid"] = a.CID
			}
			return f
		})
	},
}

// withAttachments wraps a provider's send so that its JSON body carries
// the message's files.
func withAttachments(send func(Credentials, Message) (*call, error), attach func(map[string]any, []Attachment)) func(Credentials, Message) (*call, error) {
	return func(c Credentials, m Message) (*call, error) {
		cl, err := send(c, m)
		if err != nil || len(m.Attachments) == 0 {
			return cl, err
		}
		if body, ok := cl.json.(map[string]any); ok {
			attach(body, m.Attachments)
		}
		return cl, nil
	}
}

func eachFile(as []Attachment, shape func(Attachment) map[string]any) []map[string]any {
	out := make([]map[string]any, len(as))
	for i, a := range as {
		out[i] = shape(a)
	}
	return out
}

// setFiles sets key to files when there are any: an empty list is left
// out, as some APIs refuse one.
func setFiles(body map[string]any, key string, files []map[string]any) {
	if len(files) > 0 {
		body[key] = files
	}
}

// sesAttachments are the files of an SES v2 Simple message.
func sesAttachments(as []Attachment) []map[string]any {
	return eachFile(as, func(a Attachment) map[string]any {
		f := map[string]any{"FileName": a.Name, "RawContent": a.base64(), "ContentType": a.MIME,
			"ContentDisposition": strings.ToUpper(a.disposition()), "ContentTransferEncoding": "BASE64"}
		if a.CID != "" {
			f["ContentId"] = a.CID
		}
		return f
	})
}

// brazeAttachments are Braze's email attachments: each a file name and
// a data: URL holding the file.
func brazeAttachments(as []Attachment) []map[string]any {
	return eachFile(as, func(a Attachment) map[string]any {
		return map[string]any{"file_name": a.Name, "url": "data:" + a.MIME + ";base64," + a.base64()}
	})
}

// formFile is a file part of a multipart/form-data body.
type formFile struct {
	field string
	file  Attachment
}

// formFiles are the file parts of Mailgun's and Infobip's form: an inline
// file under inline (named by its CID, which the HTML refers to), any
// other under attachment.
func formFiles(as []Attachment, inline, attachment string) []formFile {
	out := make([]formFile, len(as))
	for i, a := range as {
		out[i] = formFile{field: attachment, file: a}
		if a.Inline() && a.CID != "" {
			a.Name = a.CID
			out[i] = formFile{field: inline, file: a}
		}
	}
	return out
}
