import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router-dom";
import { useApi } from "../../api/context.js";
import { unwrap } from "../../api/errors.js";
import { teamKeys, useWebhookDeliveries } from "../../api/team.js";
import { formatTime } from "../../components/format.js";
import { Pager, usePager } from "../../components/pager.js";
import { Badge, Empty, ErrorNotice, Loading, StateBadge } from "../../components/status.js";

/** A webhook's configuration and its delivery log, newest first. */
export function WebhookPage() {
  const id = useParams().webhookID!;
  const { client } = useApi();
  const webhook = useQuery({
    queryKey: [...teamKeys.webhooks, id],
    queryFn: ({ signal }) =>
      unwrap(client.GET("/events/webhooks/{webhookID}", { params: { path: { webhookID: id } }, signal })),
  });
  const pager = usePager();
  const deliveries = useWebhookDeliveries(id, pager.current);
  const w = webhook.data;
  const items = deliveries.data?.items ?? [];

  return (
    <section className="page" style={{ padding: 0 }} aria-label="Webhook deliveries">
      <div className="breadcrumbs">
        <Link to="/team/webhooks">Webhooks</Link> / {w?.name ?? id}
      </div>
      <ErrorNotice error={webhook.error} title="Could not read the webhook" />
      {w && (
        <div className="panel">
          <div className="panel-body">
            <dl className="props">
              <dt>Name</dt>
              <dd>
                {w.name} {w.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="">disabled</Badge>}
              </dd>
              <dt>URL</dt>
              <dd className="mono">{w.url}</dd>
              <dt>Events</dt>
              <dd>
                {w.events.map((e) => (
                  <span key={e} className="tag">
                    {e}
                  </span>
                ))}
              </dd>
              <dt>Created</dt>
              <dd>{formatTime(w.createdAt)}</dd>
            </dl>
          </div>
        </div>
      )}
      <h2>Deliveries</h2>
      <ErrorNotice error={deliveries.error} title="Could not read the deliveries" />
      {deliveries.isPending ? (
        <Loading />
      ) : items.length === 0 ? (
        <div className="panel">
          <Empty title="No deliveries yet">Attempts show here as events happen (kept 7 days).</Empty>
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Delivery attempts" data-testid="webhook-deliveries">
            <thead>
              <tr>
                <th>Time</th>
                <th>Event</th>
                <th className="num">Attempt</th>
                <th>Outcome</th>
                <th className="num">Status</th>
                <th className="num">Took</th>
                <th>Error</th>
                <th>Event ID</th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.deliveryID}>
                  <td className="nowrap">{formatTime(d.timestamp)}</td>
                  <td>{d.eventType.replace("sandbox.lifecycle.", "")}</td>
                  <td className="num">{d.attempt}</td>
                  <td>
                    <StateBadge state={d.outcome} />
                  </td>
                  <td className="num">{d.statusCode ?? "—"}</td>
                  <td className="num">{d.durationMs} ms</td>
                  <td className="wrap">{d.error ?? ""}</td>
                  <td className="mono faint">{d.eventID}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextToken={deliveries.data?.nextToken} count={items.length} label="deliveries" />
    </section>
  );
}
