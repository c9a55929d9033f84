package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"regexp"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// sigV4 signs a request to an AWS service (SES, SNS) with the
// integration's key id (apiKey), secret (secretKey) and region, using the
// AWS SDK's signer: canonical requests are easy to get subtly wrong.
func sigV4(c Credentials, service string, d Deps) func(*http.Request, []byte) error {
	return func(req *http.Request, body []byte) error {
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: val(c.APIKey), SecretAccessKey: val(c.SecretKey)}
		return v4.NewSigner().SignHTTP(req.Context(), creds, req, hex.EncodeToString(sum[:]), service, val(c.Region), d.now())
	}
}

var xmlTags sync.Map // tag → *regexp.Regexp

// xmlValue returns the text of the first <tag> element of an AWS query
// API's XML answer.
func xmlValue(body []byte, tag string) string {
	v, ok := xmlTags.Load(tag)
	if !ok {
		v, _ = xmlTags.LoadOrStore(tag, regexp.MustCompile(`<`+regexp.QuoteMeta(tag)+`>([^<]*)</`+regexp.QuoteMeta(tag)+`>`))
	}
	re := v.(*regexp.Regexp)
	if m := re.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return ""
}
