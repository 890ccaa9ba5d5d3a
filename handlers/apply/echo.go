package apply

// rejectedEcho is the recorded effect of a marker that repeats marker-shaped
// text of the user's message: the user (or a document they forwarded) cannot
// instruct omega by getting the model to echo a marker.
const rejectedEcho = "rejected: echo of marker-shaped text from the user's message"
