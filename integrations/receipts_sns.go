package integrations

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// snsMessage is an Amazon SNS HTTP(S) message: a subscription confirmation
// or a notification.
type snsMessage struct {
	Type             string `json:"Type"`
	MessageID        string `json:"MessageId"`
	Token            string `json:"Token"`
	TopicArn         string `json:"TopicArn"`
	Subject          string `json:"Subject"`
	Message          string `json:"Message"`
	SubscribeURL     string `json:"SubscribeURL"`
	Timestamp        string `json:"Timestamp"`
	SignatureVersion string `json:"SignatureVersion"`
	Signature        string `json:"Signature"`
	SigningCertURL   string `json:"SigningCertURL"`
}

// stringToSign is what SNS signs: the message's fields, each name and value
// on a line of its own, in the order SNS documents for the message's type.
func (m snsMessage) stringToSign() string {
	fields := [][2]string{{"Message", m.Message}, {"MessageId", m.MessageID}}
	if m.Type == "Notification" {
		if m.Subject != "" {
			fields = append(fields, [2]string{"Subject", m.Subject})
		}
		fields = append(fields, [2]string{"Timestamp", m.Timestamp}, [2]string{"TopicArn", m.TopicArn}, [2]string{"Type", m.Type})
	} else {
		fields = append(fields, [2]string{"SubscribeURL", m.SubscribeURL}, [2]string{"Timestamp", m.Timestamp},
			[2]string{"Token", m.Token}, [2]string{"TopicArn", m.TopicArn}, [2]string{"Type", m.Type})
	}
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(f[0] + "\n" + f[1] + "\n")
	}
	return b.String()
}

// snsHost is what the host of an SNS signing certificate's URL, and of a
// subscription's confirmation URL, must be: Amazon's SNS endpoints.
var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// snsVerifier checks SNS signatures with certificates it fetches from
// Amazon, and keeps them: each is used for many messages.
type snsVerifier struct {
	// hostOK says whether a certificate or confirmation URL's host is
	// Amazon's; nil means snsHost. Tests point it at their own server.
	hostOK func(host string) bool
	// client, when set, fetches certificates and confirms subscriptions
	// instead of the store's outbound client; tests trust their server.
	client *http.Client
	mu     sync.Mutex
	certs  map[string]*x509.Certificate
}

func (v *snsVerifier) trusted(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return nil, false
	}
	ok := snsHost.MatchString
	if v.hostOK != nil {
		ok = v.hostOK
	}
	return u, ok(u.Hostname())
}

// verify checks m's signature: the certificate comes from Amazon's SNS
// host, over HTTPS, and signed the message's string to sign.
func (v *snsVerifier) verify(ctx context.Context, client *http.Client, m snsMessage) error {
	if v.client != nil {
		client = v.client
	}
	u, ok := v.trusted(m.SigningCertURL)
	if !ok {
		return errUnverified
	}
	cert, err := v.cert(ctx, client, u.String())
	if err != nil {
		return err
	}
	key, ok := cert.PublicKey.(*rsa.PublicKey)
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if !ok || err != nil {
		return errUnverified
	}
	text := []byte(m.stringToSign())
	switch m.SignatureVersion {
	case "1":
		sum := sha1.Sum(text)
		err = rsa.VerifyPKCS1v15(key, crypto.SHA1, sum[:], sig)
	case "2":
		sum := sha256.Sum256(text)
		err = rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig)
	default:
		return errUnverified
	}
	if err != nil {
		return errUnverified
	}
	return nil
}

// cert fetches, once, the PEM certificate at u.
func (v *snsVerifier) cert(ctx context.Context, client *http.Client, u string) (*x509.Certificate, error) {
	v.mu.Lock()
	c := v.certs[u]
	v.mu.Unlock()
	if c != nil {
		return c, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errUnverified
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch SNS signing certificate: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	block, _ := pem.Decode(body)
	if res.StatusCode != http.StatusOK || block == nil {
		return nil, errUnverified
	}
	c, err = x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, errUnverified
	}
	v.mu.Lock()
	if v.certs == nil {
		v.certs = map[string]*x509.Certificate{}
	}
	v.certs[u] = c
	v.mu.Unlock()
	return c, nil
}

// readSES reads Amazon SES events as SNS delivers them. Every message's
// SNS signature is checked; a subscription confirmation is confirmed by
// visiting its SubscribeURL (on Amazon's host); a notification carries
// one SES event. A signing key that is a topic ARN (arn:…) is the topic
// the messages must come from.
func readSES(ctx context.Context, s *Store, q receiptRequest) ([]Receipt, error) {
	var m snsMessage
	if json.Unmarshal(q.body, &m) != nil || m.Signature == "" {
		return nil, errUnverified
	}
	if arn := q.signingKey(); strings.HasPrefix(arn, "arn:") && arn != m.TopicArn {
		return nil, errUnverified
	}
	if err := s.sns.verify(ctx, s.outbound.Client, m); err != nil {
		return nil, err
	}
	switch m.Type {
	case "SubscriptionConfirmation":
		return nil, s.confirmSNS(ctx, m)
	case "Notification":
		return readSESEvent(m)
	}
	return nil, nil
}

// confirmSNS confirms a subscription by visiting its SubscribeURL.
func (s *Store) confirmSNS(ctx context.Context, m snsMessage) error {
	u, ok := s.sns.trusted(m.SubscribeURL)
	if !ok {
		return errUnverified
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errUnverified
	}
	client := s.outbound.Client
	if s.sns.client != nil {
		client = s.sns.client
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("confirm SNS subscription: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("confirm SNS subscription: %s", res.Status)
	}
	return nil
}

// readSESEvent reads the SES event an SNS notification carries, as an
// event publishing destination (eventType) or a notification topic
// (notificationType) sends it.
func readSESEvent(m snsMessage) ([]Receipt, error) {
	var e struct {
		EventType        string `json:"eventType"`
		NotificationType string `json:"notificationType"`
		Mail             struct {
			MessageID string `json:"messageId"`
			Timestamp string `json:"timestamp"`
		} `json:"mail"`
		Bounce struct {
			BounceType string `json:"bounceType"`
			Recipients []struct {
				Diagnostic string `json:"diagnosticCode"`
			} `json:"bouncedRecipients"`
		} `json:"bounce"`
		Reject struct {
			Reason string `json:"reason"`
		} `json:"reject"`
	}
	if json.Unmarshal([]byte(m.Message), &e) != nil {
		return nil, invalidBody("ses")
	}
	t := firstOf(e.EventType, e.NotificationType)
	kind := map[string]string{"Send": ReceiptSent, "Delivery": ReceiptDelivered, "Bounce": ReceiptBounced,
		"Complaint": ReceiptComplained, "Reject": ReceiptFailed, "Open": ReceiptOpened, "Click": ReceiptClicked,
		"DeliveryDelay": ReceiptDelayed, "Rendering Failure": ReceiptFailed}[t]
	if kind == "" {
		return nil, nil
	}
	if t == "Bounce" && e.Bounce.BounceType == "Transient" {
		kind = ReceiptDelayed
	}
	why := e.Reject.Reason
	if len(e.Bounce.Recipients) > 0 {
		why = e.Bounce.Recipients[0].Diagnostic
	}
	if why == "" && t == "Bounce" {
		why = e.Bounce.BounceType + " bounce"
	}
	at, _ := time.Parse(time.RFC3339Nano, m.Timestamp)
	return []Receipt{{ProviderMessageID: e.Mail.MessageID, Event: kind, ProviderStatus: t, Error: why, At: at,
		Raw: m.Message}}, nil
}
