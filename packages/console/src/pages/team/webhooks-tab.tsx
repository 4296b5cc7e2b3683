import type { Schemas } from "@x/platform-client";
import { useState } from "react";
import { Link } from "react-router-dom";
import {
  SANDBOX_EVENT_TYPES,
  type SandboxEventType,
  useCreateWebhook,
  useDeleteWebhook,
  useUpdateWebhook,
  useWebhooks,
  type Webhook,
} from "../../api/team.js";
import { ConfirmDialog, FormDialog } from "../../components/dialog.js";
import { Badge, Empty, ErrorNotice, Loading } from "../../components/status.js";
import { RelativeTime } from "../../components/time.js";

const short = (t: SandboxEventType) => t.replace("sandbox.lifecycle.", "");

interface Draft {
  name: string;
  url: string;
  events: SandboxEventType[];
  enabled: boolean;
  secret: string;
}

function WebhookDialog({ open, onClose, editing }: { open: boolean; onClose(): void; editing?: Webhook }) {
  const create = useCreateWebhook();
  const update = useUpdateWebhook();
  const mutation = editing ? update : create;
  const [draft, setDraft] = useState<Draft>(() =>
    editing
      ? { name: editing.name, url: editing.url, events: editing.events, enabled: editing.enabled, secret: "" }
      : {
          name: "",
          url: "",
          events: ["sandbox.lifecycle.created", "sandbox.lifecycle.killed"],
          enabled: true,
          secret: "",
        },
  );
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const urlValid = /^https?:\/\/\S+$/.test(draft.url.trim());
  const valid =
    draft.name.trim() !== "" &&
    urlValid &&
    draft.events.length > 0 &&
    (editing !== undefined || draft.secret !== "");

  const submit = () => {
    if (editing) {
      const body: Schemas["WebhookUpdate"] = {
        name: draft.name.trim(),
        url: draft.url.trim(),
        events: draft.events,
        enabled: draft.enabled,
        ...(draft.secret ? { signatureSecret: draft.secret } : {}),
      };
      update.mutate({ id: editing.id, body }, { onSuccess: onClose });
    } else {
      create.mutate(
        {
          name: draft.name.trim(),
          url: draft.url.trim(),
          events: draft.events,
          enabled: draft.enabled,
          signatureSecret: draft.secret,
        },
        { onSuccess: onClose },
      );
    }
  };

  return (
    <FormDialog
      open={open}
      onClose={onClose}
      title={editing ? `Edit webhook ${editing.name}` : "New webhook"}
      submitLabel={editing ? "Save" : "Create"}
      onSubmit={submit}
      pending={mutation.isPending}
      error={mutation.error}
      invalid={!valid}
      testId="webhook-dialog"
      submitTestId="webhook-submit"
    >
      <label className="field">
        <span>Name</span>
        <input
          value={draft.name}
          onChange={(e) => set({ name: e.target.value })}
          maxLength={128}
          data-autofocus
        />
      </label>
      <label className="field">
        <span>URL</span>
        <input
          type="url"
          value={draft.url}
          onChange={(e) => set({ url: e.target.value })}
          placeholder="https://example.com/hooks/sandboxes"
        />
      </label>
      <fieldset className="field" style={{ border: "none", padding: 0, margin: 0 }}>
        <legend className="muted" style={{ fontSize: 12, fontWeight: 500, marginBottom: 4 }}>
          Events
        </legend>
        <div className="row">
          {SANDBOX_EVENT_TYPES.map((t) => (
            <label key={t} className="check">
              <input
                type="checkbox"
                checked={draft.events.includes(t)}
                onChange={(e) =>
                  set({
                    events: e.target.checked ? [...draft.events, t] : draft.events.filter((x) => x !== t),
                  })
                }
              />
              {short(t)}
            </label>
          ))}
        </div>
      </fieldset>
      <label className="field">
        <span>Signature secret</span>
        <input
          type="password"
          autoComplete="new-password"
          value={draft.secret}
          onChange={(e) => set({ secret: e.target.value })}
          maxLength={256}
          placeholder={editing ? "leave empty to keep the current one" : ""}
        />
        <span className="hint">Each POST is signed with it (e2b-signature); it is never shown again.</span>
      </label>
      <label className="check">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
        Enabled
      </label>
    </FormDialog>
  );
}

/** The team's webhooks: lifecycle events POSTed to URLs. */
export function WebhooksTab() {
  const webhooks = useWebhooks();
  const remove = useDeleteWebhook();
  const toggle = useUpdateWebhook();
  const [editing, setEditing] = useState<Webhook | "new">();
  const [deleting, setDeleting] = useState<Webhook>();

  return (
    <section className="page" style={{ padding: 0 }} aria-label="Webhooks">
      <div className="row">
        <p className="muted grow" style={{ margin: 0 }}>
          Each event of the team's sandboxes of the chosen types is POSTed, signed, to the URL, and retried
          until it answers 2xx. At most 20 per team.
        </p>
        <button
          type="button"
          className="primary"
          onClick={() => setEditing("new")}
          data-testid="webhook-create"
        >
          New webhook
        </button>
      </div>
      <ErrorNotice error={webhooks.error} title="Could not list webhooks" />
      <ErrorNotice error={toggle.error} title="Could not update the webhook" />
      {webhooks.isPending ? (
        <Loading />
      ) : webhooks.data?.length === 0 ? (
        <div className="panel">
          <Empty title="No webhooks" />
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Webhooks" data-testid="webhook-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>URL</th>
                <th>Events</th>
                <th>State</th>
                <th>Created</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {webhooks.data?.map((w) => (
                <tr key={w.id} data-testid={`webhook-row-${w.id}`}>
                  <td>
                    <Link to={`/team/webhooks/${encodeURIComponent(w.id)}`}>{w.name}</Link>
                  </td>
                  <td className="mono ellipsis" style={{ maxWidth: 280 }} title={w.url}>
                    {w.url}
                  </td>
                  <td className="wrap">
                    {w.events.map((e) => (
                      <span key={e} className="tag">
                        {short(e)}
                      </span>
                    ))}
                  </td>
                  <td>{w.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="">disabled</Badge>}</td>
                  <td>
                    <RelativeTime iso={w.createdAt} />
                  </td>
                  <td className="actions">
                    <div className="row">
                      <button
                        type="button"
                        className="small"
                        onClick={() => toggle.mutate({ id: w.id, body: { enabled: !w.enabled } })}
                        disabled={toggle.isPending}
                      >
                        {w.enabled ? "Disable" : "Enable"}
                      </button>
                      <button
                        type="button"
                        className="small"
                        onClick={() => setEditing(w)}
                        aria-label={`Edit ${w.name}`}
                      >
                        Edit
                      </button>
                      <Link className="button small" to={`/team/webhooks/${encodeURIComponent(w.id)}`}>
                        Deliveries
                      </Link>
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => {
                          remove.reset();
                          setDeleting(w);
                        }}
                        aria-label={`Delete ${w.name}`}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing !== undefined && (
        <WebhookDialog
          open
          onClose={() => setEditing(undefined)}
          editing={editing === "new" ? undefined : editing}
        />
      )}
      <ConfirmDialog
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        title={`Delete webhook ${deleting?.name ?? ""}?`}
        message="Deliveries not yet made and its delivery log go with it."
        confirmLabel="Delete webhook"
        onConfirm={() => deleting && remove.mutate(deleting.id, { onSuccess: () => setDeleting(undefined) })}
        pending={remove.isPending}
        error={remove.error}
      />
    </section>
  );
}
