package provider

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The two files every attachment case sends: a PDF offered for download
// and a PNG shown in the body under the Content-ID "logo".
var (
	invoice = Attachment{Name: "invoice.pdf", MIME: "application/pdf", Content: []byte("%PDF-1.4 invoice 42\x00\xff")}
	logo    = Attachment{Name: "logo.png", MIME: "image/png", Content: []byte("\x89PNG\r\n\x1a\n\x00logo"), CID: "logo"}
	pdf64   = base64.StdEncoding.EncodeToString(invoice.Content)
	png64   = base64.StdEncoding.EncodeToString(logo.Content)
)

// attachmentCases are, for each HTTP email provider that sends files,
// where its documented request carries the two files.
var attachmentCases = map[string]map[string]string{
	"sendgrid": {"attachments.0.content": pdf64, "attachments.0.filename": "invoice.pdf", "attachments.0.type": "application/pdf",
		"attachments.0.disposition": "attachment", "attachments.1.content": png64, "attachments.1.content_id": "logo",
		"attachments.1.disposition": "inline"},
	"ses": {"Content.Simple.Attachments.0.FileName": "invoice.pdf", "Content.Simple.Attachments.0.RawContent": pdf64,
		"Content.Simple.Attachments.0.ContentType": "application/pdf", "Content.Simple.Attachments.0.ContentDisposition": "ATTACHMENT",
		"Content.Simple.Attachments.1.ContentId": "logo", "Content.Simple.Attachments.1.ContentDisposition": "INLINE",
		"Content.Simple.Attachments.1.RawContent": png64},
	"postmark": {"Attachments.0.Name": "invoice.pdf", "Attachments.0.Content": pdf64, "Attachments.0.ContentType": "application/pdf",
		"Attachments.1.Content": png64, "Attachments.1.ContentID": "cid:logo"},
	"resend": {"attachments.0.filename": "invoice.pdf", "attachments.0.content": pdf64, "attachments.1.content": png64,
		"attachments.1.content_id": "logo"},
	"mailjet": {"Messages.0.Attachments.0.Filename": "invoice.pdf", "Messages.0.Attachments.0.Base64Content": pdf64,
		"Messages.0.Attachments.0.ContentType": "application/pdf", "Messages.0.InlinedAttachments.0.ContentID": "logo",
		"Messages.0.InlinedAttachments.0.Base64Content": png64},
	"sendinblue": {"attachment.0.name": "invoice.pdf", "attachment.0.content": pdf64, "attachment.1.name": "logo.png",
		"attachment.1.content": png64},
	"sparkpost": {"content.attachments.0.name": "invoice.pdf", "content.attachments.0.type": "application/pdf",
		"content.attachments.0.data": pdf64, "content.inline_images.0.name": "logo", "content.inline_images.0.data": png64},
	"mailersend": {"attachments.0.filename": "invoice.pdf", "attachments.0.content": pdf64, "attachments.0.disposition": "attachment",
		"attachments.1.id": "logo", "attachments.1.disposition": "inline", "attachments.1.content": png64},
	"mandrill": {"message.attachments.0.name": "invoice.pdf", "message.attachments.0.type": "application/pdf",
		"message.attachments.0.content": pdf64, "message.images.0.name": "logo", "message.images.0.type": "image/png",
		"message.images.0.content": png64},
	"mailtrap": {"attachments.0.filename": "invoice.pdf", "attachments.0.content": pdf64, "attachments.0.type": "application/pdf",
		"attachments.1.content_id": "logo", "attachments.1.disposition": "inline"},
	"netcore": {"personalizations.0.attachments.0.name": "invoice.pdf", "personalizations.0.attachments.0.content": pdf64,
		"personalizations.0.attachments.1.content": png64},
	"braze": {"messages.email.attachments.0.file_name": "invoice.pdf",
		"messages.email.attachments.0.url": "data:application/pdf;base64," + pdf64,
		"messages.email.attachments.1.url": "data:image/png;base64," + png64},
	"email-webhook": {"attachments.0.name": "invoice.pdf", "attachments.0.mime": "application/pdf", "attachments.0.content": pdf64,
		"attachments.1.cid": "logo", "attachments.1.disposition": "inline"},
}

// multipartAttachments are the providers whose form carries files as
// parts: the field of the download and of the inline file.
var multipartAttachments = map[string][2]string{"mailgun": {"attachment", "inline"}, "infobip-email": {"attachment", "inlineImage"}}

// TestSend_Attachments sends the two files through each provider's double
// and finds them where its API documents them, byte for byte.
func TestSend_Attachments(t *testing.T) {
	now := time.Now().UTC()
	for _, tc := range emailCases {
		fields, isJSON := attachmentCases[tc.id]
		parts, isForm := multipartAttachments[tc.id]
		t.Run(tc.id, func(t *testing.T) {
			is := is.New(t)
			is.Equal(SendsAttachments(tc.id), isJSON || isForm) // the catalog says whether it sends files
			if !isJSON && !isForm {
				return
			}
			d := newDouble(t, tc)
			s, m := tc.sender(t, d, now)
			m.Attachments = []Attachment{invoice, logo}
			d.answer(cmpInt(tc.status, 200), tc.reply, tc.replyH)
			_, err := s.Send(t.Context(), m)
			is.NoErr(err) // sent with its files
			r := d.last()
			if isForm {
				files := formParts(t, r)
				is.Equal(files[parts[0]+":invoice.pdf"], string(invoice.Content)) // the download, intact, under its field
				is.Equal(files[parts[1]+":logo"], string(logo.Content))           // the inline file, named by its CID
				return
			}
			doc := decodeBody(r)
			for path, want := range fields {
				if got := pick(doc, path); got != want {
					t.Errorf("body %s = %q, want %q", path, got, want)
				}
			}
		})
	}
	is.New(t).True(!SendsAttachments("plunk")) // a provider without files is known as one
}

// formParts reads a multipart form's file parts as field:filename →
// content.
func formParts(t *testing.T, r *request) map[string]string {
	t.Helper()
	_, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("content type: %v", err)
	}
	mr := multipart.NewReader(strings.NewReader(string(r.body)), params["boundary"])
	out := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("form: %v", err)
		}
		if p.FileName() != "" {
			b, _ := io.ReadAll(p)
			out[p.FormName()+":"+p.FileName()] = string(b)
		}
	}
}
