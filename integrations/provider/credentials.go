package provider

// Credentials are a provider's credentials (docs/api.md, "Integrations"),
// all optional. The integrations domain stores them sealed and answers them
// back; the senders read them. AppSID, SenderID and AppIOBaseURL appear only
// in an integration's update response (docs/api.md, "Integrations").
type Credentials struct {
	APIKey                 *string        `json:"apiKey,omitempty"`
	User                   *string        `json:"user,omitempty"`
	SecretKey              *string        `json:"secretKey,omitempty"`
	Domain                 *string        `json:"domain,omitempty"`
	Password               *string        `json:"password,omitempty"`
	Host                   *string        `json:"host,omitempty"`
	Port                   *string        `json:"port,omitempty"`
	Secure                 *bool          `json:"secure,omitempty"`
	Region                 *string        `json:"region,omitempty"`
	AccountSID             *string        `json:"accountSid,omitempty"`
	MessageProfileID       *string        `json:"messageProfileId,omitempty"`
	Token                  *string        `json:"token,omitempty"`
	From                   *string        `json:"from,omitempty"`
	SenderName             *string        `json:"senderName,omitempty"`
	ProjectName            *string        `json:"projectName,omitempty"`
	ApplicationID          *string        `json:"applicationId,omitempty"`
	ClientID               *string        `json:"clientId,omitempty"`
	RequireTLS             *bool          `json:"requireTls,omitempty"`
	IgnoreTLS              *bool          `json:"ignoreTls,omitempty"`
	TLSOptions             map[string]any `json:"tlsOptions,omitempty"`
	BaseURL                *string        `json:"baseUrl,omitempty"`
	WebhookURL             *string        `json:"webhookUrl,omitempty"`
	RedirectURL            *string        `json:"redirectUrl,omitempty"`
	HMAC                   *bool          `json:"hmac,omitempty"`
	ServiceAccount         *string        `json:"serviceAccount,omitempty"`
	IPPoolName             *string        `json:"ipPoolName,omitempty"`
	APIKeyRequestHeader    *string        `json:"apiKeyRequestHeader,omitempty"`
	SecretKeyRequestHeader *string        `json:"secretKeyRequestHeader,omitempty"`
	IDPath                 *string        `json:"idPath,omitempty"`
	DatePath               *string        `json:"datePath,omitempty"`
	APIToken               *string        `json:"apiToken,omitempty"`
	AuthenticateByToken    *bool          `json:"authenticateByToken,omitempty"`
	AuthenticationTokenKey *string        `json:"authenticationTokenKey,omitempty"`
	InstanceID             *string        `json:"instanceId,omitempty"`
	AlertUID               *string        `json:"alertUid,omitempty"`
	Title                  *string        `json:"title,omitempty"`
	ImageURL               *string        `json:"imageUrl,omitempty"`
	State                  *string        `json:"state,omitempty"`
	ExternalLink           *string        `json:"externalLink,omitempty"`
	ChannelID              *string        `json:"channelId,omitempty"`
	PhoneNumberIdentifier  *string        `json:"phoneNumberIdentification,omitempty"`
	AccessKey              *string        `json:"accessKey,omitempty"`
	AppSID                 *string        `json:"appSid,omitempty"`
	SenderID               *string        `json:"senderId,omitempty"`
	AppIOBaseURL           *string        `json:"AppIOBaseUrl,omitempty"`
	// AutoCreateSubscribers is Herald's own, on an in_app integration:
	// whether an inbox session may create the subscriber it names. Unset,
	// it may in every environment but Production, whose subscribers the
	// team's backend creates through the API.
	AutoCreateSubscribers *bool `json:"autoCreateSubscribers,omitempty"`
	// StatusCallback is where the provider is to post what becomes of a
	// message, for a send call that can name it: the integration's
	// receipt route, when Herald knows its public address and the
	// integration takes receipts. It is derived, never stored nor shown.
	StatusCallback string `json:"-"`
}

// Value returns the string credential with the JSON name field, or "".
func (c Credentials) Value(field string) string {
	if p := c.strings()[field]; p != nil {
		return *p
	}
	return ""
}

// Set stores v as the string credential with the JSON name field; unknown
// names are ignored. Tests and fixtures use it.
func (c *Credentials) Set(field, v string) {
	if p, ok := c.pointers()[field]; ok {
		*p = &v
	}
}

func (c Credentials) strings() map[string]*string {
	out := map[string]*string{}
	for k, p := range (&c).pointers() {
		out[k] = *p
	}
	return out
}

// pointers maps each string credential's JSON name to its field.
func (c *Credentials) pointers() map[string]**string {
	return map[string]**string{
		"apiKey": &c.APIKey, "user": &c.User, "secretKey": &c.SecretKey, "domain": &c.Domain,
		"password": &c.Password, "host": &c.Host, "port": &c.Port, "region": &c.Region,
		"accountSid": &c.AccountSID, "messageProfileId": &c.MessageProfileID, "token": &c.Token,
		"from": &c.From, "senderName": &c.SenderName, "projectName": &c.ProjectName,
		"applicationId": &c.ApplicationID, "clientId": &c.ClientID, "baseUrl": &c.BaseURL,
		"webhookUrl": &c.WebhookURL, "redirectUrl": &c.RedirectURL, "serviceAccount": &c.ServiceAccount,
		"ipPoolName": &c.IPPoolName, "apiKeyRequestHeader": &c.APIKeyRequestHeader,
		"secretKeyRequestHeader": &c.SecretKeyRequestHeader, "idPath": &c.IDPath, "datePath": &c.DatePath,
		"apiToken": &c.APIToken, "authenticationTokenKey": &c.AuthenticationTokenKey,
		"instanceId": &c.InstanceID, "alertUid": &c.AlertUID, "title": &c.Title, "imageUrl": &c.ImageURL,
		"state": &c.State, "externalLink": &c.ExternalLink, "channelId": &c.ChannelID,
		"phoneNumberIdentification": &c.PhoneNumberIdentifier, "accessKey": &c.AccessKey,
		"appSid": &c.AppSID, "senderId": &c.SenderID, "AppIOBaseUrl": &c.AppIOBaseURL,
	}
}

func on(b *bool) bool { return b != nil && *b }

func val(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
