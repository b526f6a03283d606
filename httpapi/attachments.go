package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/attachment"
	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/store"
)

// AttachmentFiles stores and serves the files attached to conversations
// (attachment.Adder). Every method is scoped to one organisation and
// conversation; the API checks the conversation is the caller's first.
type AttachmentFiles interface {
	Add(ctx context.Context, orgID, userID, conversationID string, f attachment.File) (store.Attachment, error)
	List(ctx context.Context, orgID, conversationID string) ([]store.Attachment, error)
	Get(ctx context.Context, orgID, conversationID, id string) (store.Attachment, error)
	Data(ctx context.Context, orgID, conversationID, id string) ([]byte, error)
	Delete(ctx context.Context, orgID, conversationID, id string) error
}

// uploadOverhead is what a multipart body may carry besides its file:
// the boundaries and part headers.
const uploadOverhead = 64 << 10

// uploadPath is the upload's route; the body cap of every other route does
// not apply to it (maxUpload does).
const uploadPath = "/api/conversations/{id}/attachments"

// maxUpload is the body cap of an upload: one file at the per-file limit
// with its multipart framing.
const maxUpload = store.MaxAttachmentBytes + uploadOverhead

func (s *server) attachmentRoutes() {
	tags := []string{"attachments"}
	limits := fmt.Sprintf(" A file is at most %d MiB; a conversation holds at most %d files and %d MiB in all.",
		store.MaxAttachmentBytes>>20, store.MaxAttachmentsPerConversation, store.MaxConversationAttachmentBytes>>20)
	register(s, huma.Operation{
		OperationID: "upload-attachment", Method: http.MethodPost, Path: uploadPath, Tags: tags,
		Summary: "Attach a file to one of the caller's conversations",
		Description: "A multipart/form-data body with the file in the field \"file\". Its text is extracted and indexed " +
			"at once, so read_document and search_attachments can use it in the conversation's next turn. PDF, DOCX " +
			"and any UTF-8 text (source code, JSON, YAML, Markdown, plain text) are read, whatever the name says; a " +
			"binary file is refused (415), an encrypted or damaged PDF is stored with status \"unreadable\" and the reason." + limits,
		DefaultStatus: http.StatusCreated, MaxBodyBytes: maxUpload + 1,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge,
			http.StatusUnsupportedMediaType, http.StatusNotImplemented},
	}, signedIn, s.uploadAttachment)
	register(s, huma.Operation{
		OperationID: "list-attachments", Method: http.MethodGet, Path: uploadPath, Tags: tags,
		Summary: "The files attached to one of the caller's conversations, oldest first",
		Errors:  []int{http.StatusNotFound, http.StatusNotImplemented},
	}, signedIn, s.listAttachments)
	register(s, huma.Operation{
		OperationID: "download-attachment", Method: http.MethodGet, Path: uploadPath + "/{attachment}", Tags: tags,
		Summary:     "An attached file, byte for byte, as uploaded",
		Description: "Served as an attachment (Content-Disposition), with the media type it was uploaded with.",
		Errors:      []int{http.StatusNotFound, http.StatusNotImplemented},
	}, signedIn, s.downloadAttachment)
	register(s, huma.Operation{
		OperationID: "delete-attachment", Method: http.MethodDelete, Path: uploadPath + "/{attachment}", Tags: tags,
		Summary: "Delete an attached file with its extracted text and index",
		Errors:  []int{http.StatusNotFound, http.StatusNotImplemented}, DefaultStatus: http.StatusNoContent,
	}, signedIn, s.deleteAttachment)
}

var errAttachmentsOff = apiErr(http.StatusNotImplemented, "not_configured", "attachments are not available on this server")

// Attachment is an attached file as the API shows it.
type Attachment struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	MediaType string    `json:"media_type"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
	Kind      string    `json:"kind,omitempty" enum:"text,docx,pdf" doc:"What the file was read as; absent when unreadable."`
	Status    string    `json:"status" enum:"ready,unreadable"`
	Error     string    `json:"error,omitempty" doc:"Why an unreadable file could not be read, in one line."`
	Chars     int       `json:"chars" doc:"Characters of extracted text."`
	Chunks    int       `json:"chunks" doc:"Passages indexed for search_attachments."`
}

func attachmentView(a store.Attachment) Attachment {
	return Attachment{ID: a.ID, Name: a.Name, MediaType: a.MediaType, Size: a.Size, SHA256: a.SHA256, CreatedAt: a.CreatedAt,
		Kind: a.Kind, Status: a.Status, Error: a.Error, Chars: a.Chars, Chunks: a.NumChunks}
}

type uploadForm struct {
	File huma.FormFile `form:"file" required:"true" doc:"The file."`
}

type uploadInput struct {
	ID      string `path:"id" doc:"The conversation's id."`
	RawBody huma.MultipartFormFiles[uploadForm]
}

type attachmentOutput struct{ Body Attachment }

func (s *server) uploadAttachment(ctx context.Context, in *uploadInput) (*attachmentOutput, error) {
	a := authFrom(ctx)
	if s.files == nil {
		return nil, errAttachmentsOff
	}
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	form := in.RawBody.Data()
	if form == nil || !form.File.IsSet {
		return nil, badRequest("the body has no file in the field \"file\"")
	}
	if form.File.Size > store.MaxAttachmentBytes {
		return nil, attachmentTooLarge(form.File.Filename, form.File.Size)
	}
	data, err := io.ReadAll(io.LimitReader(form.File, store.MaxAttachmentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > store.MaxAttachmentBytes {
		return nil, attachmentTooLarge(form.File.Filename, int64(len(data)))
	}
	mt := form.File.ContentType
	if _, _, err := mime.ParseMediaType(mt); err != nil {
		mt = "application/octet-stream"
	}
	att, err := s.files.Add(ctx, a.OrgID, a.UserID, in.ID, attachment.File{Name: form.File.Filename, MediaType: mt, Data: data})
	if err != nil {
		return nil, refusal(err)
	}
	return &attachmentOutput{Body: attachmentView(att)}, nil
}

func attachmentTooLarge(name string, size int64) *Error {
	return apiErr(http.StatusRequestEntityTooLarge, "attachment_too_large",
		fmt.Sprintf("%q is %d bytes; the limit for one file is %d MiB", name, size, store.MaxAttachmentBytes>>20))
}

// refusal maps an Add refusal to its status and code, with the refusal's
// one-line message; anything else stays an internal error.
func refusal(err error) error {
	if !errors.Is(err, attachment.ErrRefused) {
		return err
	}
	msg := err.Error()
	var de *document.Error
	if errors.As(err, &de) {
		msg = de.Msg
	}
	switch {
	case errors.Is(err, document.ErrBinary):
		return apiErr(http.StatusUnsupportedMediaType, "unsupported_file", msg)
	case errors.Is(err, store.ErrAttachmentTooLarge), errors.Is(err, document.ErrTooLarge):
		return apiErr(http.StatusRequestEntityTooLarge, "attachment_too_large", msg)
	case errors.Is(err, store.ErrAttachmentQuota):
		return apiErr(http.StatusConflict, "attachment_quota", msg)
	}
	return apiErr(http.StatusBadRequest, "invalid_attachment", msg)
}

type attachmentsOutput struct {
	Body struct {
		Attachments []Attachment `json:"attachments"`
	}
}

func (s *server) listAttachments(ctx context.Context, in *conversationPath) (*attachmentsOutput, error) {
	a := authFrom(ctx)
	if s.files == nil {
		return nil, errAttachmentsOff
	}
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	list, err := s.files.List(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	out := &attachmentsOutput{}
	out.Body.Attachments = make([]Attachment, 0, len(list))
	for _, att := range list {
		out.Body.Attachments = append(out.Body.Attachments, attachmentView(att))
	}
	return out, nil
}

type attachmentPath struct {
	ID         string `path:"id" doc:"The conversation's id."`
	Attachment string `path:"attachment" doc:"The attachment's id."`
}

type downloadOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

func (s *server) downloadAttachment(ctx context.Context, in *attachmentPath) (*downloadOutput, error) {
	a := authFrom(ctx)
	if s.files == nil {
		return nil, errAttachmentsOff
	}
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	att, err := s.files.Get(ctx, a.OrgID, in.ID, in.Attachment)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such attachment in this conversation")
	}
	if err != nil {
		return nil, err
	}
	data, err := s.files.Data(ctx, a.OrgID, in.ID, in.Attachment)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such attachment in this conversation")
	}
	if err != nil {
		return nil, err
	}
	return &downloadOutput{ContentType: att.MediaType,
		ContentDisposition: mime.FormatMediaType("attachment", map[string]string{"filename": att.Name}), Body: data}, nil
}

func (s *server) deleteAttachment(ctx context.Context, in *attachmentPath) (*struct{}, error) {
	a := authFrom(ctx)
	if s.files == nil {
		return nil, errAttachmentsOff
	}
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	err := s.files.Delete(ctx, a.OrgID, in.ID, in.Attachment)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such attachment in this conversation")
	}
	return nil, err
}
