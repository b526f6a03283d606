package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"

	"github.com/danielgtaylor/huma/v2"
)

// Error is the body of every failed response:
// {"error": {"code": "...", "message": "..."}}. Its message is written for
// the caller; internal details are logged, never put here.
type Error struct {
	status int
	// retryAfter, when positive, is sent as Retry-After (whole seconds).
	retryAfter time.Duration
	Detail     ErrorInfo `json:"error"`
}

// ErrorInfo says what went wrong.
type ErrorInfo struct {
	Code    string `json:"code" doc:"Stable machine-readable reason, e.g. not_found, csrf, rate_limited." example:"not_found"`
	Message string `json:"message" doc:"What went wrong, in words for people." example:"no such conversation"`
}

func (e *Error) Error() string { return e.Detail.Code + ": " + e.Detail.Message }

// GetStatus is the response status (huma.StatusError).
func (e *Error) GetStatus() int { return e.status }

// apiErr is an error with its own code.
func apiErr(status int, code, msg string) *Error {
	return &Error{status: status, Detail: ErrorInfo{Code: code, Message: msg}}
}

// BusyRetryAfter is the Retry-After of a 503 for a store too busy to
// take a request's writes in time (store.ErrBusy).
const BusyRetryAfter = 5 * time.Second

// errBusy is the 503 of a request the store could not take in time: a
// new error each time, as huma adds headers in place.
func errBusy() *Error {
	e := apiErr(http.StatusServiceUnavailable, "unavailable", "the server is too busy to take this now; try again in a few seconds")
	e.retryAfter = BusyRetryAfter
	return e
}

// retryAfterHeader is e's Retry-After value, "" when it has none.
func (e *Error) retryAfterHeader() string {
	if e.retryAfter <= 0 {
		return ""
	}
	return strconv.Itoa(int(math.Ceil(e.retryAfter.Seconds())))
}

var errInternal = apiErr(http.StatusInternalServerError, "internal", "internal error; it has been logged")

func notFound(msg string) *Error   { return apiErr(http.StatusNotFound, "not_found", msg) }
func badRequest(msg string) *Error { return apiErr(http.StatusBadRequest, "invalid_request", msg) }

// codes is the default code of a status, for errors huma raises itself
// (validation, body size, content type).
var codes = map[int]string{
	http.StatusBadRequest:            "invalid_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusPaymentRequired:       "budget_exceeded",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusNotAcceptable:         "not_acceptable",
	http.StatusRequestTimeout:        "timeout",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "body_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusTooManyRequests:       "rate_limited",
	http.StatusNotImplemented:        "not_configured",
	http.StatusServiceUnavailable:    "unavailable",
}

// newHumaError replaces huma.NewError: every error huma writes has our
// shape. A validation failure (huma's 422) is a 400; a 5xx never carries
// its details (huma puts the Go error there).
func newHumaError(status int, msg string, errs ...error) huma.StatusError {
	if status == http.StatusUnprocessableEntity {
		status = http.StatusBadRequest
	}
	if status >= 500 {
		if status == http.StatusInternalServerError {
			return errInternal
		}
		return apiErr(status, codes[status], strings.ToLower(http.StatusText(status)))
	}
	code, ok := codes[status]
	if !ok {
		code = "error"
	}
	var details []string
	for _, e := range errs {
		var d *huma.ErrorDetail
		switch {
		case e == nil:
			continue
		case errors.As(e, &d):
			// Location and message only: Value echoes the request.
			if d.Location != "" {
				details = append(details, d.Location+": "+d.Message)
			} else {
				details = append(details, d.Message)
			}
		default:
			details = append(details, e.Error())
		}
	}
	if len(details) > 0 {
		msg += ": " + strings.Join(details, "; ")
	}
	return apiErr(status, code, msg)
}

// init routes huma's error constructors to ours, for the whole process.
// huma v2 (v2.37.2 here, still so in v2.39.0) has no per-API hook:
// NewError and NewErrorWithContext are package variables, read when an
// operation registers (its error schema is documented from NewError(0, ""))
// and on every error huma writes itself (validation, content negotiation,
// a handler's plain error). The per-API Config.Transformers run after the
// status and Content-Type are chosen, so they could not turn huma's 422
// into our 400 nor drop application/problem+json, and the OpenAPI document
// would still describe huma.ErrorModel. A per-API constructor is asked for
// upstream in danielgtaylor/huma#352. httpapi is the only Quiver package
// that imports huma (go run ./scripts/house -check keeps it out of domain
// packages), so the override reaches nothing else; both variables are set
// here, before any API registers an operation.
func init() {
	huma.NewError = newHumaError
	huma.NewErrorWithContext = func(_ huma.Context, status int, msg string, errs ...error) huma.StatusError {
		return newHumaError(status, msg, errs...)
	}
}

// publicError turns a handler's error into what the caller may see:
// status errors pass unchanged (with any headers huma.ErrorWithHeaders
// added), the rest go through toError.
func (s *server) publicError(ctx context.Context, op string, err error) error {
	var he huma.HeadersError
	if errors.As(err, &he) {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		var se huma.StatusError
		if errors.As(err, &se) {
			return err
		}
		e = s.toError(ctx, op, err)
	}
	if ra := e.retryAfterHeader(); ra != "" {
		return huma.ErrorWithHeaders(e, http.Header{"Retry-After": {ra}})
	}
	return e
}

// toError is err in our shape: an Engine's *BadRequest is a 400 and its
// *Conflict a 409 conflict, both with their message; a budget used up
// (*budget.ExceededError) a 402 budget_exceeded with its message; a store too busy to
// take the work in time (store.ErrBusy, or a deadline of the server's own
// passing while the request is live) is a 503 with Retry-After, logged
// as a warning; anything else that is not a status error is logged and
// answered 500.
func (s *server) toError(ctx context.Context, op string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var br *BadRequest
	if errors.As(err, &br) {
		return badRequest(br.Msg)
	}
	var ie *engine.InputError
	var over *budget.ExceededError
	switch {
	case errors.As(err, &over):
		return apiErr(http.StatusPaymentRequired, "budget_exceeded", over.Error())
	case errors.Is(err, engine.ErrNoConversation):
		return notFound("no such conversation")
	case errors.Is(err, engine.ErrNoTurn):
		return badRequest(engine.ErrNoTurn.Error())
	case errors.Is(err, store.ErrTooManyBranches):
		return errTooManyBranches
	case errors.Is(err, store.ErrNoSuchTurn):
		return errNoSuchTurn
	case errors.As(err, &ie):
		return badRequest(ie.Msg)
	}
	var cf *Conflict
	if errors.As(err, &cf) {
		return apiErr(http.StatusConflict, "conflict", cf.Msg)
	}
	var se huma.StatusError
	if errors.As(err, &se) {
		return newHumaError(se.GetStatus(), se.Error()).(*Error)
	}
	if errors.Is(err, store.ErrBusy) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		s.log.WarnContext(ctx, "httpapi: store busy; answered 503", "op", op, "err", err)
		return errBusy()
	}
	s.internal(ctx, op, err)
	return errInternal
}

// internal logs an error whose detail the caller must not see.
func (s *server) internal(ctx context.Context, op string, err error) {
	level := slog.LevelError
	if errors.Is(err, context.Canceled) {
		level = slog.LevelInfo // the client went away
	}
	s.log.Log(ctx, level, "httpapi: request failed", "op", op, "err", err)
}

// writeError writes e outside huma (middleware, fallback routes).
func writeError(w http.ResponseWriter, e *Error) {
	if ra := e.retryAfterHeader(); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(e)
}

// writeHumaError writes e from a huma middleware, before the handler ran.
func writeHumaError(ctx huma.Context, e *Error) {
	if ra := e.retryAfterHeader(); ra != "" {
		ctx.SetHeader("Retry-After", ra)
	}
	ctx.SetHeader("Content-Type", "application/json")
	ctx.SetStatus(e.status)
	_ = json.NewEncoder(ctx.BodyWriter()).Encode(e)
}
