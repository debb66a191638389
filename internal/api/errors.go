package api

import (
	"context"
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
