import type { Schemas } from "@x/platform-client";
import { useState } from "react";
import { useApi } from "../../api/context.js";
import { CopyButton } from "../../components/copy-button.js";
import { ConfirmDialog, Dialog, FormDialog } from "../../components/dialog.js";
import { formatTime } from "../../components/format.js";
import { Badge, Empty, ErrorNotice, Loading } from "../../components/status.js";
import { RelativeTime } from "../../components/time.js";

type Mask = Schemas["IdentifierMaskingDetails"];

/** One key or token as listed (never with its secret). */
export interface SecretRow {
  id: string;
  name: string;
  mask: Mask;
  createdAt: string;
  lastUsed: string | null;
}

interface Mutation<V, R> {
  mutate(vars: V, opts?: { onSuccess?: (r: R) => void }): void;
  reset(): void;
  isPending: boolean;
  error: unknown;
}

export interface SecretsTableProps {
  /** "API key" or "access token". */
  noun: string;
  rows: SecretRow[] | undefined;
  loading: boolean;
  error: unknown;
  create: Mutation<string, { secret: string }>;
  rename?: Mutation<{ id: string; name: string }, unknown>;
  revoke: Mutation<string, unknown>;
  /** What the secret is for, under the title. */
  about: string;
  testPrefix: string;
}

const masked = (m: Mask) => `${m.prefix}${m.maskedValuePrefix}…${m.maskedValueSuffix}`;

/** Is this the credential this browser is signed in with? */
function isCurrent(m: Mask, secret: string): boolean {
  return (
    secret.startsWith(m.prefix + m.maskedValuePrefix) &&
    secret.endsWith(m.maskedValueSuffix) &&
    secret.length === m.prefix.length + m.valueLength
  );
}

/** List, create (shown once), rename and revoke: for API keys and access tokens alike. */
export function SecretsTable(props: SecretsTableProps) {
  const { noun, rows, create, rename, revoke, testPrefix } = props;
  const { session } = useApi();
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; secret: string }>();
  const [renaming, setRenaming] = useState<SecretRow>();
  const [newName, setNewName] = useState("");
  const [revoking, setRevoking] = useState<SecretRow>();
  const nameValid = name.trim().length >= 1 && name.trim().length <= 100;

  return (
    <section className="page" style={{ padding: 0 }} aria-label={`${noun}s`}>
      <div className="row">
        <p className="muted grow" style={{ margin: 0 }}>
          {props.about}
        </p>
        <button
          type="button"
          className="primary"
          onClick={() => {
            create.reset();
            setName("");
            setCreating(true);
          }}
          data-testid={`${testPrefix}-create`}
        >
          New {noun}
        </button>
      </div>
      <ErrorNotice error={props.error} title={`Could not list ${noun}s`} />
      {props.loading ? (
        <Loading />
      ) : !rows || rows.length === 0 ? (
        <div className="panel">
          <Empty title={`No ${noun}s`} />
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label={`${noun}s`} data-testid={`${testPrefix}-table`}>
            <thead>
              <tr>
                <th>Name</th>
                <th>Secret</th>
                <th>Created</th>
                <th>Last used</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id} data-testid={`${testPrefix}-row-${r.id}`}>
                  <td>
                    {r.name}{" "}
                    {isCurrent(r.mask, session.secret) && (
                      <Badge tone="info" title="This browser is signed in with it">
                        this console
                      </Badge>
                    )}
                  </td>
                  <td className="mono">{masked(r.mask)}</td>
                  <td title={formatTime(r.createdAt)}>
                    <RelativeTime iso={r.createdAt} />
                  </td>
                  <td>
                    <RelativeTime iso={r.lastUsed} />
                  </td>
                  <td className="actions">
                    <div className="row">
                      {rename && (
                        <button
                          type="button"
                          className="small"
                          onClick={() => {
                            rename.reset();
                            setNewName(r.name);
                            setRenaming(r);
                          }}
                          aria-label={`Rename ${r.name}`}
                        >
                          Rename
                        </button>
                      )}
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => {
                          revoke.reset();
                          setRevoking(r);
                        }}
                        aria-label={`Revoke ${r.name}`}
                        data-testid={`${testPrefix}-revoke-${r.id}`}
                      >
                        Revoke
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <FormDialog
        open={creating}
        onClose={() => setCreating(false)}
        title={`New ${noun}`}
        submitLabel="Create"
        onSubmit={() =>
          create.mutate(name.trim(), {
            onSuccess: ({ secret }) => {
              setCreating(false);
              setCreated({ name: name.trim(), secret });
            },
          })
        }
        pending={create.isPending}
        error={create.error}
        invalid={!nameValid}
        testId={`${testPrefix}-create-dialog`}
        submitTestId={`${testPrefix}-create-submit`}
      >
        <label className="field">
          <span>Name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={100}
            data-autofocus
            placeholder="ci, laptop, …"
            data-testid={`${testPrefix}-name`}
          />
        </label>
      </FormDialog>

      <Dialog open={created !== undefined} onClose={() => setCreated(undefined)} title={`${noun} created`}>
        <p style={{ margin: 0 }}>
          Copy <strong>{created?.name}</strong> now: it is shown only once, and the platform keeps only its
          hash.
        </p>
        <div className="secret-box">
          <input
            readOnly
            value={created?.secret ?? ""}
            aria-label={`The new ${noun}`}
            data-testid="created-secret"
            onFocus={(e) => e.target.select()}
          />
          <CopyButton text={created?.secret ?? ""} testId="created-secret-copy" />
        </div>
        <div className="dialog-actions">
          <button type="button" className="primary" onClick={() => setCreated(undefined)} data-autofocus>
            Done
          </button>
        </div>
      </Dialog>

      {rename && (
        <FormDialog
          open={renaming !== undefined}
          onClose={() => setRenaming(undefined)}
          title={`Rename ${renaming?.name ?? ""}`}
          submitLabel="Rename"
          onSubmit={() =>
            renaming &&
            rename.mutate(
              { id: renaming.id, name: newName.trim() },
              { onSuccess: () => setRenaming(undefined) },
            )
          }
          pending={rename.isPending}
          error={rename.error}
          invalid={!newName.trim() || newName.trim().length > 100}
        >
          <label className="field">
            <span>Name</span>
            <input
              value={newName}
              onChange={(e) => setNewName(e.target.value)}
              maxLength={100}
              data-autofocus
            />
          </label>
        </FormDialog>
      )}

      <ConfirmDialog
        open={revoking !== undefined}
        onClose={() => setRevoking(undefined)}
        title={`Revoke ${revoking?.name ?? ""}?`}
        message={
          revoking && isCurrent(revoking.mask, session.secret)
            ? `This console is signed in with this ${noun}: revoking it signs you out.`
            : `Requests with it are refused (401) at once. This cannot be undone.`
        }
        confirmLabel="Revoke"
        onConfirm={() => revoking && revoke.mutate(revoking.id, { onSuccess: () => setRevoking(undefined) })}
        pending={revoke.isPending}
        error={revoke.error}
        testId={`${testPrefix}-revoke-dialog`}
      />
    </section>
  );
}
