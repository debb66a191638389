package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is an answer the service gave instead of success: a non-2xx status, or a 2xx whose body carries a
// different statusCode.
type APIError struct {
	Method string
	Path   string // spec path, without query
	Page   string // "page 3", "after 1700000000000" or "" where the call has no position
	Status int    // HTTP status, or the body's statusCode when InBody
	InBody bool   // the HTTP status was 2xx but the body's statusCode said Status
	// Message is the body's messages/message when present, else a snippet of the body.
	Message string
	// RetryAfter is the wait the service asked for on a 429 or 503, 0 if none.
	RetryAfter time.Duration
	// Foreign says why the answer cannot be the billing service's (an HTML page, a body that is
	// not JSON, JSON without the service's statusCode), "" when it may be: see NotTheService.
	Foreign string
}

func (e *APIError) Error() string {
	status := "HTTP " + strconv.Itoa(e.Status)
	if txt := http.StatusText(e.Status); txt != "" {
		status += " " + txt
	}
	if e.InBody {
		status = "statusCode " + strconv.Itoa(e.Status) + " in a 2xx answer"
	}
	msg := where(e.Method, e.Path, e.Page) + ": " + status
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// AuthError is the service refusing the API key (HTTP 401). It is about the key, not the endpoint
// that happened to ask first: the client keeps the first one and fails every later call with it,
// unsent, so a run reports it once.
type AuthError struct {
	Host  string    // scheme and host of the service
	First *APIError // the first refused call
}

func (e *AuthError) Error() string {
	msg := fmt.Sprintf("%s refused the API key (HTTP 401 Unauthorized", e.Host)
	if m := e.First.Message; m != "" {
		msg += ": " + m
	}
	return msg + ")"
}

// Unwrap gives the first refused call's answer.
func (e *AuthError) Unwrap() error { return e.First }

func (e *AuthError) again(*call) error { return e }

// IsAuthFailure reports whether err is the service refusing the API key.
func IsAuthFailure(err error) bool {
	var a *AuthError
	return errors.As(err, &a)
}

// IsUnavailable reports whether err says the service could not be used for the moment (no
// answer, a timeout, a 5xx, a 429), as against an answer about this request or its data.
func IsUnavailable(err error) bool {
	var u *unreachableError
	var ae *APIError
	switch {
	case errors.As(err, &u):
		return true
	case errors.As(err, &ae):
		return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// IsDuplicateRequest reports whether err is the service's refusal of a repeated write: 429 "Duplicate request
// detected. Please wait 1 minute before trying again." on invoice create. It is an answer about the write, not a
// rate limit: the same create reached the service moments ago, so it must not be retried but reconciled.
func IsDuplicateRequest(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests && ae.Method == http.MethodPost &&
		strings.HasPrefix(strings.ToLower(strings.TrimSpace(ae.Message)), "duplicate request")
}

// unknownOutcomeError marks a write that may or may not have been applied.
type unknownOutcomeError struct{ err error }

func (e *unknownOutcomeError) Error() string {
	return e.err.Error() + " (outcome unknown: the write may have been applied)"
}

func (e *unknownOutcomeError) Unwrap() error { return e.err }

// IsUnknownOutcome reports whether err comes from a write whose effect on the service is unknown: the request
// was sent but the answer was a 5xx, a timeout, a dropped connection or an undecodable 200. A job must find
// out (by reading) whether the write happened before it tries again.
func IsUnknownOutcome(err error) bool {
	var u *unknownOutcomeError
	return errors.As(err, &u)
}

// redactedError replaces the error text of an error that somehow carried the key; the chain stays reachable.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func where(method, path, page string) string {
	if page == "" {
		return method + " " + path
	}
	return method + " " + path + " " + page
}

// attemptsNote tells how many attempts a failed call made, when more than one.
func attemptsNote(err error, n int) error {
	if n <= 1 {
		return err
	}
	return fmt.Errorf("%w (after %d attempts)", err, n)
}

// ForeignAnswer is a 2xx answer that cannot be the billing service's: the base URL probably names
// another server (a typo, a proxy's or a web server's page). It wraps the decode error.
type ForeignAnswer struct {
	Why string // "an HTML page", "a body that is not JSON", ...
	err error
}

func (e *ForeignAnswer) Error() string {
	return e.err.Error() + " (" + e.Why + ", not the billing service's JSON)"
}

func (e *ForeignAnswer) Unwrap() error { return e.err }

// NotTheService says why err comes from an answer that cannot be the billing service's, or ""
// when it may be. Callers that know the setting naming the base URL point the person at it.
func NotTheService(err error) string {
	var fa *ForeignAnswer
	if errors.As(err, &fa) {
		return fa.Why
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Foreign
	}
	return ""
}

// foreignBody says why a 2xx body cannot be the service's, which always answers a JSON object.
func foreignBody(h http.Header, body []byte) string {
	switch k := kindOf(body); {
	case isHTML(h, body):
		return "an HTML page"
	case k == "not JSON" || k != "absent" && k != "object" && k != "array" && !json.Valid(body):
		return "a body that is not JSON"
	}
	return ""
}

// foreignError says why a non-2xx answer cannot be the service's. The spec shows no error body,
// so only what no reading of it allows counts: a page of HTML, text that is not JSON, or a JSON
// object without the statusCode every answer of the service carries. An empty body proves nothing.
func foreignError(h http.Header, body []byte) string {
	if why := foreignBody(h, body); why != "" {
		return why
	}
	if kindOf(body) != "object" {
		return ""
	}
	var e struct {
		StatusCode json.RawMessage `json:"statusCode"`
	}
	if unmarshal(body, &e) == nil && len(e.StatusCode) == 0 {
		return "a JSON answer without the service's statusCode"
	}
	return ""
}

func isHTML(h http.Header, body []byte) bool {
	if ct := strings.ToLower(h.Get("Content-Type")); strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml") {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '<'
}
