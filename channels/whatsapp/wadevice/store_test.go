package wadevice

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

func openSQLite(t *testing.T, foreignKeys bool) *sql.DB {
	t.Helper()
	q := url.Values{}
	q.Set("_busy_timeout", "5000")
	q.Set("_journal_mode", "WAL")
	if foreignKeys {
		q.Set("_foreign_keys", "1")
	}
	dsn := (&url.URL{Scheme: "file", Path: filepath.Join(t.TempDir(), "omega.db"), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenDeviceStoreSQLite(t *testing.T) {
	ctx := t.Context()
	db := openSQLite(t, true)

	container, err := OpenDeviceStore(ctx, db, "sqlite", nil)
	if err != nil {
		t.Fatalf("OpenDeviceStore: %v", err)
	}
	dev, err := container.GetFirstDevice(ctx)
	if err != nil {
		t.Fatalf("GetFirstDevice: %v", err)
	}
	if dev.ID != nil {
		t.Fatalf("fresh store has paired device %v", dev.ID)
	}
	cl, err := Open(ctx, container, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if pn, _ := cl.OwnJIDs(); !pn.IsEmpty() {
		t.Errorf("fresh device reported as paired to %v", pn)
	}
	// A second open (next start-up) finds the schema current.
	if _, err := OpenDeviceStore(ctx, db, "sqlite", nil); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'whatsmeow_device'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("whatsmeow_device table: n=%d err=%v", n, err)
	}
}

func TestOpenDeviceStoreErrors(t *testing.T) {
	ctx := t.Context()
	if _, err := OpenDeviceStore(ctx, openSQLite(t, false), "sqlite", nil); err == nil {
		t.Error("sqlite without foreign keys: want error")
	}
	if _, err := OpenDeviceStore(ctx, openSQLite(t, true), "mysql", nil); err == nil {
		t.Error("unknown dialect: want error")
	}
	if _, err := Open(ctx, nil, nil); err == nil {
		t.Error("client without a device store: want error")
	}
}
