package channels

import "context"

// PhotoReporter is implemented by channels that can say which platform
// message a sent photo became; the turn records the ids.
type PhotoReporter interface {
	SendPhotoResult(ctx context.Context, chatID string, photo Attachment, caption string) (SendResult, error)
}

// SendPhoto sends photo through ch, with the platform's ids when the
// channel reports them.
func SendPhoto(ctx context.Context, ch Channel, chatID string, photo Attachment, caption string) (SendResult, error) {
	if r, ok := ch.(PhotoReporter); ok {
		return r.SendPhotoResult(ctx, chatID, photo, caption)
	}
	if err := ch.SendPhoto(ctx, chatID, photo, caption); err != nil {
		return SendResult{}, err
	}
	return SendResult{Chunks: 1}, nil
}
