// @generated from openapi.yaml by scripts/spec-to-ts.mjs; do not edit.
export const openapiDocument: Record<string, unknown> = {
  "openapi": "3.0.3",
  "info": {
    "title": "Sandbox platform API",
    "version": "0.1.0",
    "description": "Platform API of the self-hostable sandbox platform: sandboxes, snapshots,\ntemplates, template builds, template tags and API keys.\n\nThe API is wire-compatible with the public `e2b` client (npm `e2b` 2.51.0):\npaths, JSON field names, enums and status codes follow what that client\nsends and reads. Operations the client never calls but our own platform\nneeds carry the tag `Platform extensions` and `x-platform-extension: true`.\n\nConventions\n- Authentication: header `X-API-Key` (the client sends `X-API-KEY`; header\n  names are case-insensitive). Keys look like `e2b_` + 40 lowercase hex digits.\n- Errors: every non-2xx response has a JSON body `{code, message}` whose\n  `code` equals the HTTP status. The client recognises e.g. \"not found\" by\n  `code: 404` in the body.\n- Paginated lists take `limit` and `nextToken` and return the cursor of the\n  next page in the `X-Next-Token` response header; the header is absent on\n  the last page.\n- Path parameters are sent percent-encoded (`encodeURIComponent`), so a\n  template ID may arrive as e.g. `team%2Fname%3Atag`; decode after routing.\n- Array query parameters use `style: form, explode: false`\n  (e.g. `state=running,paused`).\n- A 2xx response without a JSON body must be 204 or carry\n  `Content-Length: 0` (the client parses any other 2xx body as JSON).\n",
    "license": {
      "name": "Apache-2.0",
      "url": "https://www.apache.org/licenses/LICENSE-2.0"
    }
  },
  "servers": [
    {
      "url": "https://api.{domain}",
      "description": "The public client derives this from `E2B_DOMAIN`; `E2B_API_URL` overrides it.",
      "variables": {
        "domain": {
          "default": "localhost"
        }
      }
    }
  ],
  "security": [
    {
      "ApiKeyAuth": []
    },
    {
      "TeamAccessToken": []
    }
  ],
  "tags": [
    {
      "name": "Sandboxes",
      "description": "Create, inspect, pause, resume, connect to and kill sandboxes."
    },
    {
      "name": "Snapshots",
      "description": "Persistent snapshots of sandboxes (stored as template builds)."
    },
    {
      "name": "Templates",
      "description": "Templates and their metadata."
    },
    {
      "name": "Template builds",
      "description": "Build requests, build-file uploads, build status and logs."
    },
    {
      "name": "Template tags",
      "description": "Named tags pointing at template builds."
    },
    {
      "name": "API keys",
      "description": "Team API key management."
    },
    {
      "name": "Access tokens",
      "description": "Bearer tokens of a team, for the console and `e2b auth`."
    },
    {
      "name": "Teams",
      "description": "The caller's team, its limits and its metrics."
    },
    {
      "name": "Volumes",
      "description": "Persistent volumes of a team, mounted into sandboxes by name."
    },
    {
      "name": "Events",
      "description": "Lifecycle events of a team's sandboxes: polled, or pushed as signed POSTs to the\nteam's webhooks (E2B's lifecycle events API and webhooks).\n"
    },
    {
      "name": "Volume content",
      "description": "Files of a volume, with the volume's own token (`Authorization: Bearer`), on the\nAPI's port (the client's `E2B_VOLUME_API_URL`).\n"
    },
    {
      "name": "Secrets",
      "description": "Secrets of a team, encrypted at rest and never returned: the egress proxy puts their\nvalues into a sandbox's outbound request headers (`${e2b.secrets.NAME}`).\n"
    },
    {
      "name": "Health",
      "description": "Liveness of the API."
    },
    {
      "name": "Platform extensions",
      "description": "Operations of this platform that the public `e2b` client does not call."
    }
  ],
  "paths": {
    "/health": {
      "get": {
        "tags": [
          "Health"
        ],
        "operationId": "getHealth",
        "summary": "API health",
        "description": "Returns 200 while the API serves requests. Needs no API key.",
        "security": [],
        "responses": {
          "200": {
            "description": "The API is healthy.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/HealthStatus"
                }
              }
            }
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          }
        }
      }
    },
    "/sandboxes": {
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "listSandboxesLegacy",
        "summary": "List running sandboxes (legacy)",
        "description": "Unpaginated list of running sandboxes. Superseded by `GET /v2/sandboxes`.",
        "deprecated": true,
        "parameters": [
          {
            "$ref": "#/components/parameters/metadataFilter"
          }
        ],
        "responses": {
          "200": {
            "description": "Running sandboxes of the team.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ListedSandbox"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "createSandboxLegacy",
        "summary": "Create a sandbox (legacy)",
        "description": "Same as `POST /v2/sandboxes` with a default timeout of 15 s. Superseded by `POST /v2/sandboxes`.",
        "deprecated": true,
        "parameters": [
          {
            "$ref": "#/components/parameters/idempotencyKey"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewSandbox"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The sandbox was created.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "422": {
            "$ref": "#/components/responses/IdempotencyKeyReused"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "504": {
            "$ref": "#/components/responses/GatewayTimeout"
          }
        }
      }
    },
    "/v2/sandboxes": {
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "listSandboxes",
        "summary": "List sandboxes",
        "description": "Paginated list of the team's sandboxes, newest first by default.\nThe cursor of the next page is returned in `X-Next-Token`.\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/metadataFilter"
          },
          {
            "name": "state",
            "in": "query",
            "description": "Only sandboxes in one of these states (comma-separated). Default is all states.",
            "required": false,
            "style": "form",
            "explode": false,
            "schema": {
              "type": "array",
              "items": {
                "$ref": "#/components/schemas/SandboxState"
              }
            }
          },
          {
            "name": "startedAfter",
            "in": "query",
            "description": "Only sandboxes started at or after this time (RFC 3339).",
            "required": false,
            "schema": {
              "type": "string",
              "format": "date-time"
            }
          },
          {
            "name": "template",
            "in": "query",
            "description": "Only sandboxes created from this template (ID or name).",
            "required": false,
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "order",
            "in": "query",
            "description": "Sort direction by start time.",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/OrderDirection"
            }
          },
          {
            "$ref": "#/components/parameters/paginationLimit"
          },
          {
            "$ref": "#/components/parameters/paginationNextToken"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of sandboxes.",
            "headers": {
              "X-Next-Token": {
                "$ref": "#/components/headers/XNextToken"
              },
              "X-Total-Running": {
                "$ref": "#/components/headers/XTotalRunning"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ListedSandbox"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "createSandbox",
        "summary": "Create a sandbox",
        "description": "Starts a sandbox from a template (ID, `name` or `name:tag`; the client\nsends `base` when no template is given). The response carries the\n`envdAccessToken` needed for every call to the sandbox.\n\nWith an `Idempotency-Key` (a platform extension) the create is safe to\nretry: see the parameter.\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/idempotencyKey"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewSandboxV2"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The sandbox was created and its agent is reachable.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "422": {
            "$ref": "#/components/responses/IdempotencyKeyReused"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "504": {
            "$ref": "#/components/responses/GatewayTimeout"
          }
        }
      }
    },
    "/sandboxes/metrics": {
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "listSandboxesMetrics",
        "summary": "Latest metrics of several sandboxes",
        "parameters": [
          {
            "name": "sandbox_ids",
            "in": "query",
            "description": "Comma-separated sandbox IDs.",
            "required": true,
            "style": "form",
            "explode": false,
            "schema": {
              "type": "array",
              "minItems": 1,
              "maxItems": 100,
              "items": {
                "type": "string"
              }
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The latest metric of each requested running sandbox, keyed by sandbox ID.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/SandboxesWithMetrics"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "getSandbox",
        "summary": "Get a sandbox",
        "description": "Details of a running or paused sandbox, including its `envdAccessToken`.",
        "responses": {
          "200": {
            "description": "The sandbox.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/SandboxDetail"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "killSandbox",
        "summary": "Kill a sandbox",
        "description": "Kills a running or paused sandbox and cuts its open streams. The client\ntreats a 404 body (`code: 404`) as \"already gone\" and returns `false`.\n",
        "responses": {
          "204": {
            "description": "The sandbox was killed."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/pause": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "pauseSandbox",
        "summary": "Pause a sandbox",
        "description": "Pauses a running sandbox. The depth reached is reported afterwards as\n`pauseKind` on the sandbox. Pausing an already paused sandbox answers\n409, which the client reports as `false` (\"was already paused\").\n",
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SandboxPauseRequest"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "The sandbox was paused and can be resumed."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/resume": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "resumeSandbox",
        "summary": "Resume a paused sandbox (legacy)",
        "description": "Resumes a paused sandbox; 409 when it is already running. Superseded by `POST /v2/sandboxes/{sandboxID}/connect`.",
        "deprecated": true,
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ResumedSandbox"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The sandbox was resumed.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "504": {
            "$ref": "#/components/responses/GatewayTimeout"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/connect": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "connectSandboxLegacy",
        "summary": "Connect to a sandbox (legacy)",
        "description": "As `POST /v2/sandboxes/{sandboxID}/connect`, but `timeout` is required.",
        "deprecated": true,
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ConnectSandbox"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The sandbox was already running.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "201": {
            "description": "The sandbox was paused and has been resumed.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "504": {
            "$ref": "#/components/responses/GatewayTimeout"
          }
        }
      }
    },
    "/v2/sandboxes/{sandboxID}/connect": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "connectSandbox",
        "summary": "Connect to a sandbox",
        "description": "Returns the sandbox's connection details, resuming it first when it is\npaused. The timeout is only ever extended, never shortened. This is\nwhat the client's `Sandbox.connect()` and resume use.\n",
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/ConnectSandboxV2"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The sandbox was already running.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "201": {
            "description": "The sandbox was paused and has been resumed.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Sandbox"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "504": {
            "$ref": "#/components/responses/GatewayTimeout"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/timeout": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "setSandboxTimeout",
        "summary": "Set a sandbox's timeout",
        "description": "The sandbox expires `timeout` seconds after this request; each call replaces the previous deadline.",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SandboxTimeoutRequest"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "The timeout was set."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/refreshes": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "refreshSandbox",
        "summary": "Keep a sandbox alive",
        "description": "Extends the sandbox's lifetime to at least `duration` seconds from now (never shortens it).",
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SandboxRefreshRequest"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "The sandbox's lifetime was extended."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/metrics": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "getSandboxMetrics",
        "summary": "Metrics of a sandbox",
        "description": "Resource usage samples of the sandbox in the interval, oldest first.",
        "parameters": [
          {
            "name": "start",
            "in": "query",
            "description": "Start of the interval, Unix time in seconds.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64",
              "minimum": 0
            }
          },
          {
            "name": "end",
            "in": "query",
            "description": "End of the interval, Unix time in seconds.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64",
              "minimum": 0
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Metric samples.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SandboxMetric"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/logs": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "getSandboxLogsLegacy",
        "summary": "Sandbox logs (legacy)",
        "description": "Superseded by `GET /v2/sandboxes/{sandboxID}/logs`.",
        "deprecated": true,
        "parameters": [
          {
            "name": "start",
            "in": "query",
            "description": "Only logs at or after this time, Unix time in milliseconds.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64",
              "minimum": 0
            }
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Maximum number of entries.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int32",
              "minimum": 0,
              "default": 1000
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Logs of the sandbox.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/SandboxLogs"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/v2/sandboxes/{sandboxID}/logs": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "getSandboxLogs",
        "summary": "Sandbox logs",
        "description": "Structured logs of the sandbox (its agent and lifecycle events).",
        "parameters": [
          {
            "name": "cursor",
            "in": "query",
            "description": "Start from this time, Unix time in milliseconds.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64",
              "minimum": 0
            }
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Maximum number of entries.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int32",
              "minimum": 0,
              "maximum": 1000,
              "default": 1000
            }
          },
          {
            "name": "direction",
            "in": "query",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/LogsDirection"
            }
          },
          {
            "name": "level",
            "in": "query",
            "description": "Minimum level to return.",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/LogLevel"
            }
          },
          {
            "name": "search",
            "in": "query",
            "description": "Case-sensitive substring the message must contain.",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Logs of the sandbox.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/SandboxLogsV2Response"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/fork": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "forkSandbox",
        "summary": "Fork a sandbox",
        "description": "Snapshots the running sandbox in place (its ID and deadline stay as they\nare) and starts `count` new sandboxes from that snapshot. 201 means the\nforks were attempted; each entry reports either the new sandbox or the\nerror that stopped that fork. Before anything is done, `count` is checked\nagainst the team's `forkCount` limit (400) and all `count` forks against\nits `sandboxes` limit (429); a team that holds its `snapshots` (or\n`templates`) limit gets 403.\n",
        "requestBody": {
          "required": false,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SandboxForkRequest"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "One result per requested fork, in order.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SandboxForkResult"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/LimitReached"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "507": {
            "$ref": "#/components/responses/InsufficientStorage"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/network": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "put": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "updateSandboxNetwork",
        "summary": "Replace a sandbox's network configuration",
        "description": "Replaces the egress configuration of a running sandbox, atomically; omitted\nfields are cleared. New connections follow it at once; open ones keep going\n(a connection the egress proxy intercepts for `rules` applies the rules it was\nopened under). Without `egressProxy`, tunnelling through a SOCKS5 proxy stops.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SandboxNetworkUpdateConfig"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "The configuration was replaced."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/network/decisions": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "get": {
        "tags": [
          "Sandboxes"
        ],
        "operationId": "getSandboxNetworkDecisions",
        "summary": "A sandbox's egress decision log",
        "description": "Extension of this platform: the newest egress decisions about a sandbox's traffic\n(up to 1000 are kept per sandbox, oldest first): connections and DNS lookups, what\nthey were for and which rule allowed or denied them. The firewall reports up to 50\nnew connections per second per sandbox; beyond that the log is a sample. Read on from\n`next` to follow it.\n",
        "parameters": [
          {
            "name": "after",
            "in": "query",
            "description": "Only decisions after this cursor (a `seq`, or the `next` of an earlier answer).",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64",
              "minimum": 0,
              "default": 0
            }
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Maximum number of decisions.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int32",
              "minimum": 1,
              "maximum": 1000,
              "default": 100
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Decisions, oldest first.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/SandboxNetworkDecisions"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/sandboxes/{sandboxID}/snapshots": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "post": {
        "tags": [
          "Snapshots"
        ],
        "operationId": "createSnapshot",
        "summary": "Snapshot a sandbox",
        "description": "Turns the sandbox's current state into a new build of a snapshot\ntemplate. With `name`, the build goes to the existing template of that\nname when there is one, otherwise a new template is created. The\nsnapshot outlives the sandbox and can be passed to sandbox create.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SandboxSnapshotRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The snapshot was created.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Snapshot"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/LimitReached"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "507": {
            "$ref": "#/components/responses/InsufficientStorage"
          }
        }
      }
    },
    "/snapshots": {
      "get": {
        "tags": [
          "Snapshots"
        ],
        "operationId": "listSnapshots",
        "summary": "List snapshots",
        "description": "Paginated list of the team's snapshots; cursor of the next page in `X-Next-Token`.",
        "parameters": [
          {
            "name": "sandboxID",
            "in": "query",
            "description": "Only snapshots taken from this sandbox.",
            "required": false,
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "name",
            "in": "query",
            "description": "Only snapshots with this name or ID, optionally namespaced and/or tag-qualified (`snap`, `team/snap`, `snap:v1`).",
            "required": false,
            "schema": {
              "type": "string"
            }
          },
          {
            "$ref": "#/components/parameters/paginationLimit"
          },
          {
            "$ref": "#/components/parameters/paginationNextToken"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of snapshots.",
            "headers": {
              "X-Next-Token": {
                "$ref": "#/components/headers/XNextToken"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Snapshot"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/events/sandboxes": {
      "get": {
        "tags": [
          "Events"
        ],
        "operationId": "listSandboxEvents",
        "summary": "Lifecycle events of the team's sandboxes",
        "description": "The team's sandbox lifecycle events (the types of `SandboxEventType`), newest first\nunless `orderAsc`. The same objects webhooks are sent.\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/eventsOffset"
          },
          {
            "$ref": "#/components/parameters/eventsLimit"
          },
          {
            "$ref": "#/components/parameters/eventsOrderAsc"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of events.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SandboxEvent"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/events/sandboxes/{sandboxID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/sandboxID"
        }
      ],
      "get": {
        "tags": [
          "Events"
        ],
        "operationId": "listSandboxEventsOf",
        "summary": "Lifecycle events of one sandbox",
        "description": "The sandbox's lifecycle events, newest first unless `orderAsc`; killed sandboxes keep\ntheirs. Empty for a sandbox the team does not own.\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/eventsOffset"
          },
          {
            "$ref": "#/components/parameters/eventsLimit"
          },
          {
            "$ref": "#/components/parameters/eventsOrderAsc"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of events.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SandboxEvent"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/events/webhooks": {
      "get": {
        "tags": [
          "Events"
        ],
        "operationId": "listWebhooks",
        "summary": "List the team's webhooks",
        "description": "Every webhook of the team, oldest first, without its signature secret.",
        "responses": {
          "200": {
            "description": "The team's webhooks.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Webhook"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Events"
        ],
        "operationId": "createWebhook",
        "summary": "Register a webhook",
        "description": "Registers a URL that gets a signed `POST` (a `SandboxEvent`) for each event of the\nteam's sandboxes of the types in `events`, from this moment on. Each request carries\n`e2b-webhook-id`, `e2b-delivery-id` (new for every attempt: receivers dedupe on the\nbody's `id`, the event's), `e2b-signature-version: v1` and `e2b-signature`: SHA-256 of\n`signatureSecret` followed by the raw body, base64url without padding (E2B's\nverification code). A delivery is retried with exponential backoff until the\nendpoint answers 2xx (see `GET /events/webhooks/{webhookID}/deliveries`). At most 20\nwebhooks per team.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewWebhook"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The webhook (without its secret).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Webhook"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/events/webhooks/{webhookID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/webhookID"
        }
      ],
      "get": {
        "tags": [
          "Events"
        ],
        "operationId": "getWebhook",
        "summary": "A webhook's configuration",
        "responses": {
          "200": {
            "description": "The webhook (without its secret).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Webhook"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "patch": {
        "tags": [
          "Events"
        ],
        "operationId": "updateWebhook",
        "summary": "Update a webhook",
        "description": "Replaces the fields given, leaves the others. Deliveries not yet made go to the new\nURL, signed with the new secret; a disabled webhook is sent nothing that happens\nwhile it is disabled.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/WebhookUpdate"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The webhook as it is now (without its secret).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Webhook"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Events"
        ],
        "operationId": "deleteWebhook",
        "summary": "Unregister a webhook",
        "description": "Deletes the webhook, its deliveries not yet made and its delivery log.",
        "responses": {
          "200": {
            "description": "The webhook was deleted (an empty body, as E2B answers)."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/events/webhooks/{webhookID}/deliveries": {
      "parameters": [
        {
          "$ref": "#/components/parameters/webhookID"
        }
      ],
      "get": {
        "tags": [
          "Events",
          "Platform extensions"
        ],
        "operationId": "listWebhookDeliveries",
        "summary": "A webhook's delivery log",
        "description": "Every attempt to deliver an event to the webhook, newest first: when, the endpoint's\nstatus code or the error, how long it took and what came of it. Paginated; cursor of\nthe next page in `X-Next-Token`. Attempts are kept for 7 days.\n",
        "x-platform-extension": true,
        "parameters": [
          {
            "$ref": "#/components/parameters/paginationLimit"
          },
          {
            "$ref": "#/components/parameters/paginationNextToken"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of attempts.",
            "headers": {
              "X-Next-Token": {
                "$ref": "#/components/headers/XNextToken"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/WebhookDeliveryAttempt"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/volumes": {
      "get": {
        "tags": [
          "Volumes"
        ],
        "operationId": "listVolumes",
        "summary": "List the team's volumes",
        "description": "Every volume of the team, oldest first, without tokens.",
        "responses": {
          "200": {
            "description": "The team's volumes.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Volume"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Volumes"
        ],
        "operationId": "createVolume",
        "summary": "Create a volume",
        "description": "Creates a persistent volume, its own filesystem of `sizeMB` (the platform's default\nwhen left out). Names are unique within the team. The answer carries the volume's\ntoken for the content API: it does not expire and dies with the volume. `domain` is\nnever set, so the client sends content calls to `E2B_VOLUME_API_URL`.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewVolume"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The volume, with its token.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VolumeAndToken"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/LimitReached"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "507": {
            "$ref": "#/components/responses/InsufficientStorage"
          }
        }
      }
    },
    "/volumes/{volumeID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/volumeID"
        }
      ],
      "get": {
        "tags": [
          "Volumes"
        ],
        "operationId": "getVolume",
        "summary": "Get a volume and its token",
        "responses": {
          "200": {
            "description": "The volume, with its token.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VolumeAndToken"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Volumes"
        ],
        "operationId": "deleteVolume",
        "summary": "Delete a volume and its files",
        "description": "Refused with 409 while a sandbox that is not killed (running or paused) mounts it;\nits token stops working at once.\n",
        "responses": {
          "204": {
            "description": "The volume and its files are gone."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/volumecontent/{volumeID}/path": {
      "parameters": [
        {
          "$ref": "#/components/parameters/volumeID"
        },
        {
          "$ref": "#/components/parameters/volumePath"
        }
      ],
      "get": {
        "tags": [
          "Volume content"
        ],
        "operationId": "statVolumePath",
        "summary": "Information about a file or directory",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "responses": {
          "200": {
            "description": "The entry.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VolumeEntryStat"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "patch": {
        "tags": [
          "Volume content"
        ],
        "operationId": "updateVolumePathMetadata",
        "summary": "Change an entry's owner or permissions",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/VolumeMetadataUpdate"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The entry as it is now.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VolumeEntryStat"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Volume content"
        ],
        "operationId": "removeVolumePath",
        "summary": "Remove a file or a directory with everything in it",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "responses": {
          "204": {
            "description": "Removed."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/volumecontent/{volumeID}/dir": {
      "parameters": [
        {
          "$ref": "#/components/parameters/volumeID"
        },
        {
          "$ref": "#/components/parameters/volumePath"
        }
      ],
      "get": {
        "tags": [
          "Volume content"
        ],
        "operationId": "listVolumeDir",
        "summary": "List a directory",
        "description": "Entries of the directory, each directory's entries after it down to `depth` levels.",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "parameters": [
          {
            "name": "depth",
            "in": "query",
            "required": false,
            "schema": {
              "type": "integer",
              "minimum": 0,
              "default": 1
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The entries, flat.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/VolumeEntryStat"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Volume content"
        ],
        "operationId": "makeVolumeDir",
        "summary": "Create a directory",
        "description": "Without `force`, an existing entry is 409 and a missing parent 404; with it, missing\nparents are created and an existing directory is fine.\n",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/volumeUid"
          },
          {
            "$ref": "#/components/parameters/volumeGid"
          },
          {
            "$ref": "#/components/parameters/volumeMode"
          },
          {
            "$ref": "#/components/parameters/volumeForce"
          }
        ],
        "responses": {
          "201": {
            "description": "The directory.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VolumeEntryStat"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "507": {
            "$ref": "#/components/responses/VolumeFull"
          }
        }
      }
    },
    "/volumecontent/{volumeID}/file": {
      "parameters": [
        {
          "$ref": "#/components/parameters/volumeID"
        },
        {
          "$ref": "#/components/parameters/volumePath"
        }
      ],
      "get": {
        "tags": [
          "Volume content"
        ],
        "operationId": "readVolumeFile",
        "summary": "Read a file",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "responses": {
          "200": {
            "description": "The file's bytes.",
            "content": {
              "application/octet-stream": {
                "schema": {
                  "type": "string",
                  "format": "binary"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "put": {
        "tags": [
          "Volume content"
        ],
        "operationId": "writeVolumeFile",
        "summary": "Write a file",
        "description": "The body is the file's bytes (streamed, chunked or with a length). Without `force`, an\nexisting file is 409 and a missing parent 404; with it, parents are created and the\nfile is replaced. A write that does not complete leaves no partial file behind.\n",
        "security": [
          {
            "VolumeToken": []
          }
        ],
        "parameters": [
          {
            "$ref": "#/components/parameters/volumeUid"
          },
          {
            "$ref": "#/components/parameters/volumeGid"
          },
          {
            "$ref": "#/components/parameters/volumeMode"
          },
          {
            "$ref": "#/components/parameters/volumeForce"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "*/*": {
              "schema": {
                "type": "string",
                "format": "binary"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The file as written.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/VolumeEntryStat"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          },
          "507": {
            "$ref": "#/components/responses/VolumeFull"
          }
        }
      }
    },
    "/templates": {
      "get": {
        "tags": [
          "Templates"
        ],
        "operationId": "listTemplates",
        "summary": "List templates (legacy)",
        "description": "Unpaginated list of the team's templates. Superseded by `GET /v2/templates`.\nWith `scope=usable` (an extension of this platform), also every template the team may\nuse but does not own: the platform's own (`base` and the templates that ship with it,\ninstalled by the system team) and other teams' public ones, each with its `owner`.\n",
        "deprecated": true,
        "parameters": [
          {
            "$ref": "#/components/parameters/teamIDQuery"
          },
          {
            "name": "scope",
            "in": "query",
            "required": false,
            "description": "Extension of this platform: `own` (the default, E2B's) lists the team's own\ntemplates; `usable` adds those it may use (the platform's, other teams' public ones).\n",
            "schema": {
              "type": "string",
              "enum": [
                "own",
                "usable"
              ],
              "default": "own"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Templates of the team.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Template"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/v2/templates": {
      "get": {
        "tags": [
          "Templates"
        ],
        "operationId": "listTemplatesV2",
        "summary": "List templates",
        "description": "Paginated list of the team's templates; cursor of the next page in `X-Next-Token`.",
        "parameters": [
          {
            "$ref": "#/components/parameters/teamIDQuery"
          },
          {
            "$ref": "#/components/parameters/paginationLimit"
          },
          {
            "$ref": "#/components/parameters/paginationNextToken"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of templates.",
            "headers": {
              "X-Next-Token": {
                "$ref": "#/components/headers/XNextToken"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Template"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/v3/templates": {
      "post": {
        "tags": [
          "Templates",
          "Template builds"
        ],
        "operationId": "createTemplate",
        "summary": "Request a template build",
        "description": "Creates the template `name` (or reuses the team's template of that name)\nand a new build in status `waiting`. A `:tag` suffix on `name` counts as\none more entry in `tags`; with no tag at all the build is tagged\n`default`. Next steps: upload build files, then start the build.\nThe names of the platform's own templates (`base`, `code-interpreter-v1`,\n`desktop`, `mcp-gateway`) and names of a template ID's form (20 hex\ndigits) are refused (400).\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/TemplateBuildRequestV3"
              }
            }
          }
        },
        "responses": {
          "202": {
            "description": "The build was registered.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateRequestResponseV3"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/aliases/{alias}": {
      "parameters": [
        {
          "name": "alias",
          "in": "path",
          "description": "Template name, optionally namespaced (`team/name`); percent-encoded.",
          "required": true,
          "schema": {
            "type": "string"
          }
        }
      ],
      "get": {
        "tags": [
          "Templates"
        ],
        "operationId": "getTemplateByAlias",
        "summary": "Look up a template by name",
        "description": "200 when the caller's team can use the template. The client treats 404\nas \"does not exist\" and 403 as \"exists but belongs to another team\".\nA bare name is the team's own, then the system team's; another team's\ntemplate is looked up as `team/name`.\n",
        "responses": {
          "200": {
            "description": "The template exists and is accessible.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateAliasResponse"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/tags": {
      "post": {
        "tags": [
          "Template tags"
        ],
        "operationId": "assignTemplateTags",
        "summary": "Assign tags to a build",
        "description": "Points each of `tags` at the build that `target` (`name:tag`, or just\n`name` meaning tag `default`) currently points at. Existing tags of the\nsame names are moved.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/AssignTemplateTagsRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The tags were assigned.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/AssignedTemplateTags"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Template tags"
        ],
        "operationId": "deleteTemplateTags",
        "summary": "Remove tags from a template",
        "description": "Removes the named tags from template `name`; the builds themselves stay.",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/DeleteTemplateTagsRequest"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "The tags were removed."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/{templateID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        }
      ],
      "get": {
        "tags": [
          "Templates"
        ],
        "operationId": "getTemplate",
        "summary": "Get a template with its builds",
        "description": "The template and one page of its builds, newest first. The cursor of the\nnext page of builds is returned twice: in the `X-Next-Token` header\n(absent on the last page; the convention of every list in this API) and\nin the body field `nextToken` (`null` on the last page).\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/paginationNextToken"
          },
          {
            "$ref": "#/components/parameters/paginationLimit"
          }
        ],
        "responses": {
          "200": {
            "description": "The template with one page of builds.",
            "headers": {
              "X-Next-Token": {
                "$ref": "#/components/headers/XNextToken"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateWithBuilds"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Templates",
          "Snapshots"
        ],
        "operationId": "deleteTemplate",
        "summary": "Delete a template",
        "description": "Deletes a template (or snapshot: the client deletes snapshots through\nthis path, passing the snapshot ID, e.g. `team/snap:default`), with all\nits builds, tags and names; layers no other template's build uses are\nremoved from disk. The client treats 404 as \"not found\" and returns\n`false`. Refused with 409 while any sandbox started from the template\nis running or paused (kill those first), or while one of its builds is\nqueued or running.\n",
        "responses": {
          "204": {
            "description": "The template was deleted."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "patch": {
        "tags": [
          "Templates"
        ],
        "operationId": "updateTemplate",
        "summary": "Update a template (legacy)",
        "description": "Same as `PATCH /v2/templates/{templateID}`.",
        "deprecated": true,
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/TemplateUpdateRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The template was updated.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateUpdateResponse"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/v2/templates/{templateID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        }
      ],
      "patch": {
        "tags": [
          "Templates"
        ],
        "operationId": "updateTemplateV2",
        "summary": "Update a template",
        "description": "Changes template settings (currently only `public`).",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/TemplateUpdateRequest"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The template was updated.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateUpdateResponse"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/{templateID}/tags": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        }
      ],
      "get": {
        "tags": [
          "Template tags"
        ],
        "operationId": "listTemplateTags",
        "summary": "List a template's tags",
        "responses": {
          "200": {
            "description": "Tags of the template.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/TemplateTag"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/{templateID}/files/{hash}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        },
        {
          "$ref": "#/components/parameters/filesHash"
        }
      ],
      "get": {
        "tags": [
          "Template builds"
        ],
        "operationId": "getTemplateFileUploadLink",
        "summary": "Get an upload link for build files",
        "description": "Tells whether the tar archive with this content hash is already cached\n(`present`) and returns an absolute, self-authorising `url` to PUT it to.\nAlways return `url`: the client uploads when `present` is false, and\nalso when the step forces an upload even though `present` is true.\n",
        "responses": {
          "201": {
            "description": "Cache state and upload link.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateBuildFileUpload"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/{templateID}/files/{hash}/upload": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        },
        {
          "$ref": "#/components/parameters/filesHash"
        }
      ],
      "put": {
        "tags": [
          "Template builds",
          "Platform extensions"
        ],
        "operationId": "uploadTemplateFiles",
        "summary": "Upload build files (target of the upload link)",
        "description": "Receives the tar archive (gzip-compressed unless the step disabled it;\ndetect by magic bytes) for a COPY step. The client sends no API key and\nusually no Content-Type, only `Content-Length`, so the request is\nauthorised by the signed `token` in the query string that\n`GET /templates/{templateID}/files/{hash}` put into the URL. The\nserver stores the archive under `hash` (it may verify the hash).\n",
        "x-platform-extension": true,
        "security": [],
        "parameters": [
          {
            "name": "token",
            "in": "query",
            "description": "Signed, expiring token bound to this template ID and hash.",
            "required": true,
            "schema": {
              "type": "string",
              "minLength": 1
            }
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "*/*": {
              "schema": {
                "type": "string",
                "format": "binary"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "The archive was stored."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "413": {
            "$ref": "#/components/responses/PayloadTooLarge"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/v2/templates/{templateID}/builds/{buildID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        },
        {
          "$ref": "#/components/parameters/buildID"
        }
      ],
      "post": {
        "tags": [
          "Template builds"
        ],
        "operationId": "startTemplateBuild",
        "summary": "Start a build",
        "description": "Starts the registered build with the given base and steps. Answers 202\nwith no body (`Content-Length: 0`); progress is read from the status\nendpoint. Exactly one of `fromImage` and `fromTemplate` is set (the\nclient defaults to `fromImage: e2bdev/base`).\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/TemplateBuildStartV2"
              }
            }
          }
        },
        "responses": {
          "202": {
            "description": "The build has started."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/{templateID}/builds/{buildID}/status": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        },
        {
          "$ref": "#/components/parameters/buildID"
        }
      ],
      "get": {
        "tags": [
          "Template builds"
        ],
        "operationId": "getTemplateBuildStatus",
        "summary": "Build status and logs",
        "description": "Status of the build plus the log entries from index `logsOffset` on\n(at most `limit`). `logEntries` is always an array, empty once the\noffset reaches the end. The client polls while the status is `waiting`\nor `building`; after `ready` or `error` it keeps polling, advancing the\noffset by the entries received, until it gets an empty page.\n",
        "parameters": [
          {
            "name": "logsOffset",
            "in": "query",
            "description": "Index of the first log entry to return.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int32",
              "minimum": 0,
              "default": 0
            }
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Maximum number of log entries to return.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int32",
              "minimum": 0,
              "maximum": 100,
              "default": 100
            }
          },
          {
            "name": "level",
            "in": "query",
            "description": "Only log entries at this level or above.",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/LogLevel"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Build status with a page of its logs.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateBuildInfo"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/templates/{templateID}/builds/{buildID}/logs": {
      "parameters": [
        {
          "$ref": "#/components/parameters/templateID"
        },
        {
          "$ref": "#/components/parameters/buildID"
        }
      ],
      "get": {
        "tags": [
          "Template builds"
        ],
        "operationId": "getTemplateBuildLogs",
        "summary": "Build logs",
        "description": "Build log entries by time cursor.",
        "parameters": [
          {
            "name": "cursor",
            "in": "query",
            "description": "Start from this time, Unix time in milliseconds.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int64",
              "minimum": 0
            }
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Maximum number of entries.",
            "required": false,
            "schema": {
              "type": "integer",
              "format": "int32",
              "minimum": 0,
              "maximum": 100,
              "default": 100
            }
          },
          {
            "name": "direction",
            "in": "query",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/LogsDirection"
            }
          },
          {
            "name": "level",
            "in": "query",
            "description": "Only entries at this level or above.",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/LogLevel"
            }
          },
          {
            "name": "source",
            "in": "query",
            "description": "Where to read the logs from.",
            "required": false,
            "schema": {
              "$ref": "#/components/schemas/LogsSource"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Log entries of the build.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TemplateBuildLogsResponse"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/api-keys": {
      "get": {
        "tags": [
          "API keys",
          "Platform extensions"
        ],
        "operationId": "listApiKeys",
        "summary": "List the team's API keys",
        "description": "Lists keys without their secret part.",
        "x-platform-extension": true,
        "responses": {
          "200": {
            "description": "API keys of the team.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ApiKey"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "API keys",
          "Platform extensions"
        ],
        "operationId": "createApiKey",
        "summary": "Create an API key",
        "description": "Creates a key for the caller's team. The plaintext `key` is in this\nresponse only; the server keeps just a hash of it.\n",
        "x-platform-extension": true,
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewApiKey"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The key was created.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/CreatedApiKey"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/api-keys/{apiKeyID}": {
      "parameters": [
        {
          "name": "apiKeyID",
          "in": "path",
          "description": "Identifier of the API key (not the key itself).",
          "required": true,
          "schema": {
            "type": "string"
          }
        }
      ],
      "delete": {
        "tags": [
          "API keys",
          "Platform extensions"
        ],
        "operationId": "deleteApiKey",
        "summary": "Revoke an API key",
        "description": "Revokes the key at once; requests with it then get 401. The caller may revoke the key it is using.",
        "x-platform-extension": true,
        "responses": {
          "204": {
            "description": "The key was revoked."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "patch": {
        "tags": [
          "API keys"
        ],
        "operationId": "updateApiKey",
        "summary": "Rename an API key",
        "description": "Changes the key's name (E2B's `UpdateTeamAPIKey`); the key itself stays.",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewApiKey"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The key was renamed.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/ApiKey"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/access-tokens": {
      "get": {
        "tags": [
          "Access tokens",
          "Platform extensions"
        ],
        "operationId": "listAccessTokens",
        "summary": "List the team's access tokens",
        "description": "Lists tokens without their secret part.",
        "x-platform-extension": true,
        "responses": {
          "200": {
            "description": "Access tokens of the team.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/AccessToken"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Access tokens"
        ],
        "operationId": "createAccessToken",
        "summary": "Create an access token",
        "description": "Creates a bearer token of the caller's team (`sk_e2b_…`), for the console and `e2b auth`:\nit is accepted as `Authorization: Bearer` wherever an API key is. The plaintext `token`\nis in this response only.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewAccessToken"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The token was created.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/CreatedAccessToken"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/access-tokens/{accessTokenID}": {
      "parameters": [
        {
          "name": "accessTokenID",
          "in": "path",
          "description": "Identifier of the access token (not the token itself).",
          "required": true,
          "schema": {
            "type": "string"
          }
        }
      ],
      "delete": {
        "tags": [
          "Access tokens"
        ],
        "operationId": "deleteAccessToken",
        "summary": "Revoke an access token",
        "description": "Revokes the token at once, and the key `GET /teams` made for it.",
        "responses": {
          "204": {
            "description": "The token was revoked."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/teams": {
      "get": {
        "tags": [
          "Teams"
        ],
        "operationId": "listTeams",
        "summary": "The caller's teams, each with an API key",
        "description": "What `e2b auth login` and `e2b auth configure` call with an access token. The platform\nhas no users, so a credential belongs to one team: the answer is that team, as the\ndefault. With an API key, `apiKey` is that key; with an access token, a key is made for\nit (replacing the one made for the same token before, so keys do not pile up).\n",
        "responses": {
          "200": {
            "description": "The caller's teams.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Team"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/teams/{teamID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/teamID"
        }
      ],
      "get": {
        "tags": [
          "Teams",
          "Platform extensions"
        ],
        "operationId": "getTeam",
        "summary": "The team, its limits and its use of them",
        "x-platform-extension": true,
        "responses": {
          "200": {
            "description": "The team.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/TeamDetail"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/teams/{teamID}/metrics": {
      "parameters": [
        {
          "$ref": "#/components/parameters/teamID"
        }
      ],
      "get": {
        "tags": [
          "Teams"
        ],
        "operationId": "getTeamMetrics",
        "summary": "The team's concurrent sandboxes and start rate over time",
        "description": "One point per step from `start` to `end` (unix seconds; the last 7 days by default). The\nstep is 5 s, or longer so that the answer has at most 1000 points. A team may read only its\nown metrics.\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/metricsStart"
          },
          {
            "$ref": "#/components/parameters/metricsEnd"
          }
        ],
        "responses": {
          "200": {
            "description": "The team's metrics.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/TeamMetric"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/teams/{teamID}/metrics/max": {
      "parameters": [
        {
          "$ref": "#/components/parameters/teamID"
        }
      ],
      "get": {
        "tags": [
          "Teams"
        ],
        "operationId": "getTeamMetricsMax",
        "summary": "The highest value of one team metric in a time range",
        "parameters": [
          {
            "$ref": "#/components/parameters/metricsStart"
          },
          {
            "$ref": "#/components/parameters/metricsEnd"
          },
          {
            "name": "metric",
            "in": "query",
            "required": true,
            "description": "Which metric.",
            "schema": {
              "type": "string",
              "enum": [
                "concurrent_sandboxes",
                "sandbox_start_rate"
              ]
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The highest value and when it was reached.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/MaxTeamMetric"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/oauth/token": {
      "post": {
        "tags": [
          "Access tokens",
          "Platform extensions"
        ],
        "operationId": "refreshAccessToken",
        "summary": "Trade a refresh token for a new access token",
        "description": "The token endpoint `e2b auth configure` calls (RFC 6749 §6, form-encoded) with the refresh\ntoken the console gave at `e2b auth login`. The access token it was given with is revoked,\nwith the key `GET /teams` made for it; the answer is a new access token and refresh token.\nAn unknown or used refresh token answers 400 `invalid_grant`.\n",
        "x-platform-extension": true,
        "security": [],
        "requestBody": {
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {
              "schema": {
                "type": "object",
                "required": [
                  "grant_type"
                ],
                "properties": {
                  "grant_type": {
                    "type": "string"
                  },
                  "refresh_token": {
                    "type": "string"
                  },
                  "client_id": {
                    "type": "string"
                  }
                }
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "A new access token and refresh token.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OAuthTokens"
                }
              }
            }
          },
          "400": {
            "description": "The grant is unknown, used or of an unsupported type (RFC 6749 §5.2).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OAuthError"
                }
              }
            }
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/oauth/revoke": {
      "post": {
        "tags": [
          "Access tokens",
          "Platform extensions"
        ],
        "operationId": "revokeOAuthToken",
        "summary": "Revoke a refresh token and its access token",
        "description": "The revocation endpoint `e2b auth logout` calls (RFC 7009, form-encoded): the refresh\ntoken, its access token and the key made for that are revoked. Answers 200 whether or not\nthe token was known, as RFC 7009 says.\n",
        "x-platform-extension": true,
        "security": [],
        "requestBody": {
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {
              "schema": {
                "type": "object",
                "required": [
                  "token"
                ],
                "properties": {
                  "token": {
                    "type": "string"
                  },
                  "token_type_hint": {
                    "type": "string"
                  },
                  "client_id": {
                    "type": "string"
                  }
                }
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The token is revoked (or was never known)."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/secrets": {
      "get": {
        "tags": [
          "Secrets"
        ],
        "operationId": "listSecrets",
        "summary": "List the team's secrets",
        "description": "The team's secrets, newest first, paged like the API's other lists. No answer under\n`/secrets` ever carries a value, and every one has `Cache-Control: no-store`.\n",
        "parameters": [
          {
            "$ref": "#/components/parameters/paginationLimit"
          },
          {
            "$ref": "#/components/parameters/paginationNextToken"
          }
        ],
        "responses": {
          "200": {
            "description": "One page of the team's secrets.",
            "headers": {
              "X-Next-Token": {
                "$ref": "#/components/headers/XNextToken"
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Secret"
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Secrets"
        ],
        "operationId": "createSecret",
        "summary": "Create a secret",
        "description": "Stores the secret's first version, encrypted at rest. The name is trimmed and\nlower-cased (1-128 of `a-z0-9_-`, not starting with `sec_`) and unique within the\nteam (409 otherwise). The value is never returned; the egress proxy puts it in\nplace of `${e2b.secrets.NAME}` in a sandbox's header transforms.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/NewSecret"
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "The secret, without its value.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Secret"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/secrets/{secretID}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/secretID"
        }
      ],
      "get": {
        "tags": [
          "Secrets"
        ],
        "operationId": "getSecret",
        "summary": "Get a secret, without its value",
        "responses": {
          "200": {
            "description": "The secret, without its value.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Secret"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "post": {
        "tags": [
          "Secrets"
        ],
        "operationId": "updateSecret",
        "summary": "Store a new version of a secret",
        "description": "The value becomes the secret's new current version (`currentVersion` + 1); older\nversions are kept but never used. Metadata left out is kept; metadata given (even\n`{}`) replaces it.\n",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SecretUpdate"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The secret, without its value.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Secret"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      },
      "delete": {
        "tags": [
          "Secrets"
        ],
        "operationId": "deleteSecret",
        "summary": "Delete a secret and every version of it",
        "responses": {
          "204": {
            "description": "The secret and its versions are gone."
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/.well-known/jwks.json": {
      "get": {
        "tags": [
          "Platform extensions"
        ],
        "operationId": "getIdentityJwks",
        "summary": "The keys that verify sandboxes' identity tokens",
        "description": "The public key set (JWKS) of the platform's identity-token key: relying parties\n(AWS STS, GCP workload identity federation, your own services) verify a sandbox's\nJWT-SVID against it. Needs no API key.\n",
        "x-platform-extension": true,
        "security": [],
        "responses": {
          "200": {
            "description": "The key set.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/JwkSet"
                }
              }
            }
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/.well-known/openid-configuration": {
      "get": {
        "tags": [
          "Platform extensions"
        ],
        "operationId": "getOpenIdConfiguration",
        "summary": "OIDC discovery of the identity tokens' issuer",
        "description": "The issuer of sandboxes' identity tokens (`iss`) and where its key set is, as OpenID\nConnect discovery has them, so relying parties that take an issuer URL find the keys.\nNeeds no API key.\n",
        "x-platform-extension": true,
        "security": [],
        "responses": {
          "200": {
            "description": "The discovery document.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/OpenIdConfiguration"
                }
              }
            }
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    },
    "/nodes": {
      "get": {
        "tags": [
          "Platform extensions"
        ],
        "operationId": "listNodes",
        "summary": "The cluster's nodes, their state and capacity",
        "description": "The hosts of a cluster (`x node`), as the web console shows them: state, capacity and\nthe last heartbeat, never their addresses. Empty under `x serve`, which is one host.\n",
        "x-platform-extension": true,
        "responses": {
          "200": {
            "description": "The nodes.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ClusterNode"
                  }
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/TooManyRequests"
          },
          "500": {
            "$ref": "#/components/responses/InternalError"
          },
          "503": {
            "$ref": "#/components/responses/ServiceUnavailable"
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "ApiKeyAuth": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "Team API key, `e2b_` followed by 40 lowercase hex digits. Header name is matched case-insensitively (the client sends `X-API-KEY`)."
      },
      "AccessTokenAuth": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Access-Token",
        "description": "Sandbox access token (`envdAccessToken`). Used by envd and the sandbox\nproxy, not by this API; defined here so both specs share the name.\nSee `schemas/envd.yaml`.\n"
      },
      "TeamAccessToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "An access token of a team (`sk_e2b_…`, `POST /access-tokens`): accepted wherever an API\nkey is, for the console and `e2b auth`. An API key sent as a bearer token works too.\n"
      },
      "VolumeToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "A volume's token (`VolumeAndToken.token`); it opens that volume's content only."
      }
    },
    "parameters": {
      "idempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "description": "A platform extension (the e2b client sends it when given in `apiHeaders`; E2B's own API\nhas no such header): a key of the caller's choosing, 1-255 visible ASCII characters,\nthat makes the create safe to retry. The same key from the same team within 24 hours\nanswers with the sandbox the first request made (201, the same body), waiting for it\nwhile that request is still making it, instead of making a second one; concurrent\nrequests with one key make exactly one sandbox. The key binds to the request: a\ndifferent body, or the other create operation, with a key already used answers 422.\nOnly a create that made a sandbox binds its key: when it fails (any error answer, or\ncalled off after a node failed), a request with the same key tries again.\n",
        "required": false,
        "x-platform-extension": true,
        "schema": {
          "type": "string",
          "minLength": 1,
          "maxLength": 255,
          "pattern": "^[!-~]+$"
        }
      },
      "teamID": {
        "name": "teamID",
        "in": "path",
        "description": "Identifier of the team.",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "metricsStart": {
        "name": "start",
        "in": "query",
        "description": "Start of the range, unix seconds (default 7 days before `end`).",
        "required": false,
        "schema": {
          "type": "integer",
          "format": "int64",
          "minimum": 0
        }
      },
      "metricsEnd": {
        "name": "end",
        "in": "query",
        "description": "End of the range, unix seconds (default now).",
        "required": false,
        "schema": {
          "type": "integer",
          "format": "int64",
          "minimum": 0
        }
      },
      "secretID": {
        "name": "secretID",
        "in": "path",
        "description": "The secret's identifier (`sec_` and 26 base32 characters) or its name.",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "volumeID": {
        "name": "volumeID",
        "in": "path",
        "description": "Identifier of the volume.",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "volumePath": {
        "name": "path",
        "in": "query",
        "description": "Path inside the volume; relative paths start at its root, `..` never leaves it.",
        "required": true,
        "schema": {
          "type": "string",
          "minLength": 1
        }
      },
      "volumeUid": {
        "name": "uid",
        "in": "query",
        "description": "Owner of what is created (default 1000, the sandbox's `user`).",
        "required": false,
        "schema": {
          "type": "integer",
          "minimum": 0,
          "maximum": 4294967294
        }
      },
      "volumeGid": {
        "name": "gid",
        "in": "query",
        "description": "Group of what is created (default 1000).",
        "required": false,
        "schema": {
          "type": "integer",
          "minimum": 0,
          "maximum": 4294967294
        }
      },
      "volumeMode": {
        "name": "mode",
        "in": "query",
        "description": "Permission bits of what is created (default 0644 for files, 0755 for directories).",
        "required": false,
        "schema": {
          "type": "integer",
          "minimum": 0,
          "maximum": 4095
        }
      },
      "volumeForce": {
        "name": "force",
        "in": "query",
        "description": "Create missing parents, and replace a file (or accept a directory) that exists.",
        "required": false,
        "schema": {
          "type": "boolean"
        }
      },
      "sandboxID": {
        "name": "sandboxID",
        "in": "path",
        "description": "Identifier of the sandbox.",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "templateID": {
        "name": "templateID",
        "in": "path",
        "description": "Template ID, or a name (`name`, `team/name`), optionally with `:tag`;\nsent percent-encoded. A bare value is a template ID first, then the\nteam's own name, then the system team's (`base` and the shipped\ntemplates are the system team's first); another team's public template\nis reached by its ID or `team/name` only.\n",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "buildID": {
        "name": "buildID",
        "in": "path",
        "description": "Identifier of the build (UUID).",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "filesHash": {
        "name": "hash",
        "in": "path",
        "description": "Hex SHA-256 the client computed over the files of a COPY step.",
        "required": true,
        "schema": {
          "type": "string",
          "pattern": "^[0-9a-f]{64}$"
        }
      },
      "webhookID": {
        "name": "webhookID",
        "in": "path",
        "description": "Identifier of the webhook.",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "eventsOffset": {
        "name": "offset",
        "in": "query",
        "description": "Number of events to skip.",
        "required": false,
        "schema": {
          "type": "integer",
          "format": "int32",
          "minimum": 0,
          "default": 0
        }
      },
      "eventsLimit": {
        "name": "limit",
        "in": "query",
        "description": "Number of events to return.",
        "required": false,
        "schema": {
          "type": "integer",
          "format": "int32",
          "minimum": 1,
          "maximum": 100,
          "default": 10
        }
      },
      "eventsOrderAsc": {
        "name": "orderAsc",
        "in": "query",
        "description": "Oldest first instead of newest first.",
        "required": false,
        "schema": {
          "type": "boolean",
          "default": false
        }
      },
      "paginationLimit": {
        "name": "limit",
        "in": "query",
        "description": "Maximum number of items per page.",
        "required": false,
        "schema": {
          "type": "integer",
          "format": "int32",
          "minimum": 1,
          "maximum": 100,
          "default": 100
        }
      },
      "paginationNextToken": {
        "name": "nextToken",
        "in": "query",
        "description": "Cursor to start the list from (an `X-Next-Token` value of a previous page).",
        "required": false,
        "schema": {
          "type": "string"
        }
      },
      "metadataFilter": {
        "name": "metadata",
        "in": "query",
        "description": "Metadata filter in query-string form, e.g. `user=abc&app=prod`; every key\nand value is itself percent-encoded before the whole string is encoded\nas this parameter's value (so decode twice). All pairs must match.\n",
        "required": false,
        "schema": {
          "type": "string"
        }
      },
      "teamIDQuery": {
        "name": "teamID",
        "in": "query",
        "description": "Ignored; the team is taken from the API key. Accepted for compatibility.",
        "required": false,
        "deprecated": true,
        "schema": {
          "type": "string"
        }
      }
    },
    "headers": {
      "XNextToken": {
        "description": "Cursor of the next page; absent when this is the last page.",
        "schema": {
          "type": "string"
        }
      },
      "XTotalRunning": {
        "description": "Number of running sandboxes matching the filters before pagination. Only sent when running sandboxes were requested.",
        "schema": {
          "type": "integer",
          "format": "int64"
        }
      },
      "RetryAfter": {
        "description": "Seconds to wait before retrying. The client retries a 429 (up to 3 times) only when this is a non-negative integer.",
        "schema": {
          "type": "integer",
          "minimum": 0
        }
      }
    },
    "responses": {
      "BadRequest": {
        "description": "The request is malformed or invalid.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 400,
              "message": "timeout: must be a non-negative integer"
            }
          }
        }
      },
      "Unauthorized": {
        "description": "Missing, unknown or revoked credential.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 401,
              "message": "invalid API key"
            }
          }
        }
      },
      "Forbidden": {
        "description": "The credential is valid but may not access this resource.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 403,
              "message": "template 'other/name' belongs to another team"
            }
          }
        }
      },
      "LimitReached": {
        "description": "The team holds as many of these (volumes, templates, snapshots) as its limits allow:\nwaiting frees none, deleting one does. The message names the limit.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 403,
              "message": "your team holds 100 volumes, the most it may (its limit is 100): delete one first"
            }
          }
        }
      },
      "NotFound": {
        "description": "The resource does not exist (or is not visible to the team).",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 404,
              "message": "sandbox 'i1a2b3c4' not found"
            }
          }
        }
      },
      "Conflict": {
        "description": "The resource is not in a state that allows the operation.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 409,
              "message": "sandbox 'i1a2b3c4' is already paused"
            }
          }
        }
      },
      "IdempotencyKeyReused": {
        "description": "The `Idempotency-Key` was used by the team within the last 24 hours for another\nrequest (a different body, or the other create operation); nothing was done.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 422,
              "message": "Idempotency-Key 'retry-1' was used by your team within the last 24 hours for a create with a different body: ..."
            }
          }
        }
      },
      "PayloadTooLarge": {
        "description": "The request body exceeds the server's limit.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 413,
              "message": "archive exceeds the upload limit"
            }
          }
        }
      },
      "TooManyRequests": {
        "description": "Rate limit exceeded.",
        "headers": {
          "Retry-After": {
            "$ref": "#/components/headers/RetryAfter"
          }
        },
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 429,
              "message": "too many requests"
            }
          }
        }
      },
      "InsufficientStorage": {
        "description": "The platform's own disk has no room for what the request writes (a snapshot's\nfiles, say); nothing of it is kept and the sandbox is as it was.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 507,
              "message": "the platform's disk is full: no room for a copy of upper (layer snap-…)"
            }
          }
        }
      },
      "VolumeFull": {
        "description": "The volume has no room left for what the request writes; nothing of it is kept.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 507,
              "message": "volume 'data' is full (1024 MB)"
            }
          }
        }
      },
      "InternalError": {
        "description": "Unexpected server error.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 500,
              "message": "internal server error"
            }
          }
        }
      },
      "ServiceUnavailable": {
        "description": "No capacity right now, or (beyond one machine) no node to answer: the sandbox's node stopped\nanswering (the sandbox is `lost`) or no node of the cluster is up. Nothing was changed and\nthe call can be retried (`Retry-After`). The client raises `ServiceBusyError`.\n",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 503,
              "message": "no capacity to place the sandbox, retry later"
            }
          }
        }
      },
      "GatewayTimeout": {
        "description": "The sandbox did not become ready in time.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            },
            "example": {
              "code": 504,
              "message": "sandbox agent did not become ready in time"
            }
          }
        }
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "description": "Body of every error response. `code` repeats the HTTP status.",
        "required": [
          "code",
          "message"
        ],
        "properties": {
          "code": {
            "type": "integer",
            "format": "int32",
            "description": "HTTP status code of the response."
          },
          "message": {
            "type": "string",
            "description": "Human-readable description of the error."
          }
        }
      },
      "HealthStatus": {
        "type": "object",
        "required": [
          "status"
        ],
        "properties": {
          "status": {
            "type": "string",
            "enum": [
              "ok"
            ]
          },
          "version": {
            "type": "string",
            "description": "Version of the platform server."
          }
        }
      },
      "CPUCount": {
        "type": "integer",
        "format": "int32",
        "minimum": 1,
        "description": "CPU cores of the sandbox."
      },
      "MemoryMB": {
        "type": "integer",
        "format": "int32",
        "minimum": 128,
        "description": "Memory of the sandbox in MiB."
      },
      "DiskSizeMB": {
        "type": "integer",
        "format": "int32",
        "minimum": 0,
        "description": "Disk size of the sandbox in MiB."
      },
      "EnvdVersion": {
        "type": "string",
        "description": "Semantic version of the in-sandbox agent (envd). The client compares it\nwith `compare-versions` (must parse as semver) and refuses features\nbelow certain versions; report at least `0.6.4`.\n",
        "example": "0.6.4"
      },
      "EnvVars": {
        "type": "object",
        "description": "Environment variables (name to value).",
        "additionalProperties": {
          "type": "string"
        }
      },
      "SandboxMetadata": {
        "type": "object",
        "description": "User metadata of the sandbox (string to string).",
        "additionalProperties": {
          "type": "string"
        }
      },
      "OrderDirection": {
        "type": "string",
        "enum": [
          "asc",
          "desc"
        ],
        "default": "desc",
        "description": "Sort direction."
      },
      "LogLevel": {
        "type": "string",
        "enum": [
          "debug",
          "info",
          "warn",
          "error"
        ],
        "description": "Severity of a log entry."
      },
      "LogsDirection": {
        "type": "string",
        "enum": [
          "forward",
          "backward"
        ],
        "description": "Read logs forward (oldest first) or backward (newest first) from the cursor."
      },
      "LogsSource": {
        "type": "string",
        "enum": [
          "temporary",
          "persistent"
        ],
        "description": "Log store to read from."
      },
      "SandboxState": {
        "type": "string",
        "enum": [
          "running",
          "paused",
          "error",
          "lost"
        ],
        "description": "State of the sandbox. `error` is a platform extension: the sandbox stopped\nworking by itself (its agent, envd, died, e.g. killed from inside); `reason`\nsays why. Its files are kept: connect (or resume) boots it afresh from them,\npause keeps them as a paused sandbox, kill removes it. It does not count\nagainst the team's limit of running sandboxes.\n`lost` is a platform extension too, beyond one machine: the node that runs the\nsandbox stopped answering (`reason` names it and when). Connect and the other\noperations answer 503 until the node comes back, when the sandbox is running or\npaused again as it was; kill forgets it.\n"
      },
      "SandboxRuntime": {
        "type": "string",
        "enum": [
          "runsc",
          "runc"
        ],
        "description": "Platform extension: the isolation runtime for this sandbox. `runsc` (gVisor, a\nuser-space kernel) is the default; `runc` shares the host kernel and starts faster.\nAn operator may keep tenants off runc (`x serve --tenant-runtimes runsc`): a create\nasking for a runtime it does not offer them is refused with 403.\n"
      },
      "PauseKind": {
        "type": "string",
        "enum": [
          "frozen",
          "checkpointed",
          "stopped"
        ],
        "description": "Extension of this platform: how deeply a paused sandbox is paused.\n`frozen` processes frozen with memory kept in RAM (instant resume);\n`checkpointed` memory saved to disk, processes continue on resume;\n`stopped` processes stopped, files kept, processes restart on resume.\n"
      },
      "SandboxOnTimeout": {
        "type": "string",
        "enum": [
          "kill",
          "pause"
        ],
        "description": "What happens when the sandbox's timeout expires."
      },
      "SandboxLifecycle": {
        "type": "object",
        "required": [
          "autoResume",
          "onTimeout"
        ],
        "properties": {
          "autoResume": {
            "type": "boolean",
            "description": "Whether traffic to the paused sandbox resumes it."
          },
          "onTimeout": {
            "$ref": "#/components/schemas/SandboxOnTimeout"
          }
        }
      },
      "SandboxAutoResumeConfig": {
        "type": "object",
        "required": [
          "enabled"
        ],
        "properties": {
          "enabled": {
            "type": "boolean",
            "default": false,
            "description": "Resume the paused sandbox when traffic reaches it."
          }
        }
      },
      "SandboxNetworkRule": {
        "type": "object",
        "description": "Rule applied to outbound requests to a matching domain.",
        "properties": {
          "transform": {
            "type": "object",
            "properties": {
              "headers": {
                "type": "object",
                "description": "Headers to set on matching requests (at most 20; an existing header of the same name is replaced).",
                "additionalProperties": {
                  "type": "string"
                }
              },
              "allowPlainHttp": {
                "type": "boolean",
                "description": "Extension of this platform (absent means false). Fill `${e2b.secrets.NAME}` and `${e2b.identity.tokens.NAME}` in requests\nover plain HTTP (port 80) too. Without it such a request is not sent: the egress proxy answers it 502\nnaming the placeholder, since on plain HTTP anyone on the way reads the value (and the sandbox, which\npicks the port, could send it there). Headers without placeholders are set on plain HTTP either way.\n"
              }
            }
          }
        }
      },
      "SandboxEgressProxyConfig": {
        "type": "object",
        "nullable": true,
        "description": "The sandbox's own SOCKS5 proxy (`null` for none): after the allow/deny decision, every outbound TCP\nconnection of the sandbox (any port) is tunnelled through it (RFC 1928, with RFC 1929 username and\npassword when given), by name (ATYP=domain, the proxy resolves it) when an allowed name (`allowOut`)\ndecided, else to the address the connection was let out by (ATYP=IPv4). UDP (DNS, QUIC) is not\ntunnelled. Fails closed: when the proxy is down, refuses or does not speak SOCKS5, the\nsandbox's connection is reset, never sent directly. Header transforms (`rules`) still apply, their\nupstream connections tunnelled too. `address` is `host:port` (port 1-65535, host lower-cased on\nwrite) and must resolve, through the platform's resolvers, to no private, loopback, link-local, CGNAT\nor 0.0.0.0/8 address unless the operator opened it (`--allow-internal`); a password needs a username;\nusername and password at most 255 bytes each. Refusals are 400 `Invalid egress proxy config: <reason>`.\nThe password is kept sealed and never returned: reads show `{address, username}`.\n",
        "required": [
          "address"
        ],
        "properties": {
          "address": {
            "type": "string",
            "description": "Proxy address, `host:port`."
          },
          "username": {
            "type": "string"
          },
          "password": {
            "type": "string"
          }
        }
      },
      "SandboxNetworkConfig": {
        "type": "object",
        "description": "Network settings of a sandbox.",
        "properties": {
          "allowOut": {
            "type": "array",
            "description": "Allowed egress destinations: IPs, CIDRs, domains, `*.` wildcards (subdomains at any depth, not the apex) and `*`.\nAn allow beats a deny; what neither list names goes out. Domains need everything else denied\n(`denyOut: [\"0.0.0.0/0\"]` or `allow_internet_access: false`) and apply to every TCP port (TLS SNI,\nHTTP Host, or the name the sandbox resolved the address from); the platform's DNS then answers only\nallowed names. Private, loopback, link-local and CGNAT addresses stay denied whatever is listed.\n",
            "items": {
              "type": "string"
            }
          },
          "denyOut": {
            "type": "array",
            "description": "Denied egress destinations (IPs and CIDRs, `0.0.0.0/0` for everything), on every protocol; refused at once (TCP reset, ICMP).",
            "items": {
              "type": "string"
            }
          },
          "allowPublicTraffic": {
            "type": "boolean",
            "default": true,
            "description": "When false, every port but envd's answers only requests with the sandbox's `trafficAccessToken` in the\n`e2b-traffic-access-token` header (403 otherwise, also for traffic that would resume it). The token stays\nacross pause and resume; each fork has its own.\n"
          },
          "maskRequestHost": {
            "type": "string",
            "description": "The Host header requests to the sandbox's ports (not envd's) are sent with; `${PORT}` stands for the port. ASCII host name or IP, optionally with `:port`."
          },
          "httpsPorts": {
            "type": "array",
            "description": "Ports inside the sandbox that serve HTTPS rather than plain HTTP; the proxy speaks TLS to them without verifying their certificates. Unique, 1-65535, at most 128, not envd's 49983.",
            "items": {
              "type": "integer",
              "format": "int32"
            }
          },
          "egressProxy": {
            "$ref": "#/components/schemas/SandboxEgressProxyConfig"
          },
          "rules": {
            "$ref": "#/components/schemas/SandboxNetworkRules"
          }
        }
      },
      "SandboxNetworkRules": {
        "type": "object",
        "description": "Per-domain transform rules applied to matching outbound HTTP (port 80) and HTTPS (port 443) requests,\nkeyed by an exact DNS name (`api.example.com`) or a leading wildcard (`*.example.com`), at most 128\ncharacters, lower-cased on write; a bare `*` is invalid. Wildcards match subdomains at any depth but\nnot the apex. Exact rules take precedence, then the longest matching wildcard suffix; matching rule\nsets are not merged. At most 10 domains, one rule each. Rules do not grant network access: allow/deny\ndecides first. HTTPS to a rule's name is terminated by the platform's egress proxy with a certificate\nof the platform's egress CA, which every sandbox trusts; other names are passed through untouched.\nHeader values may hold `${e2b.secrets.NAME}` and `${e2b.identity.tokens.NAME}` (at most 32 distinct\nsecret names per domain), filled in by the proxy on each request; a placeholder without a value fails\nthe request (502 from the proxy), it is never sent literally. Placeholders are filled over HTTPS only\nunless the rule sets `allowPlainHttp`; a wildcard with placeholders may not sit on a public suffix\n(`*.github.io`, `*.co.uk`: 400), and is not filled for a site registered beneath one it covers\n(`*.amazonaws.com` for `bucket.s3.amazonaws.com`: 502). Echoed as given (placeholders unresolved).\n",
        "additionalProperties": {
          "type": "array",
          "items": {
            "$ref": "#/components/schemas/SandboxNetworkRule"
          }
        }
      },
      "SandboxNetworkDecisions": {
        "type": "object",
        "description": "Extension of this platform. A page of a sandbox's egress decision log.",
        "required": [
          "decisions",
          "next"
        ],
        "properties": {
          "decisions": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxNetworkDecision"
            }
          },
          "next": {
            "type": "integer",
            "format": "int64",
            "description": "The cursor to read on from (`after`); the same as sent when nothing is new."
          }
        }
      },
      "SandboxNetworkDecision": {
        "type": "object",
        "description": "Extension of this platform. One egress decision about a sandbox's traffic.",
        "required": [
          "seq",
          "time",
          "protocol",
          "verdict",
          "rule"
        ],
        "properties": {
          "seq": {
            "type": "integer",
            "format": "int64"
          },
          "time": {
            "type": "string",
            "format": "date-time"
          },
          "protocol": {
            "type": "string",
            "enum": [
              "tcp",
              "udp",
              "icmp",
              "dns",
              "other"
            ],
            "description": "`dns` for a name lookup through the platform's resolver, else the connection's protocol."
          },
          "destination": {
            "type": "string",
            "description": "The address the sandbox sent to (absent for DNS)."
          },
          "name": {
            "type": "string",
            "description": "The host name asked for (DNS), named by the connection (TLS SNI, HTTP Host) or resolved for its address before."
          },
          "port": {
            "type": "integer",
            "format": "int32"
          },
          "verdict": {
            "type": "string",
            "enum": [
              "allowed",
              "denied"
            ]
          },
          "rule": {
            "type": "string",
            "description": "What decided, e.g. `allowOut 198.51.100.0/24`, `allowOut *.example.com`, `denyOut 0.0.0.0/0`, `private range (always denied)`, `default (not denied)`."
          }
        }
      },
      "SandboxNetworkUpdateConfig": {
        "type": "object",
        "description": "Full replacement of a running sandbox's egress configuration; omitted fields are cleared.",
        "properties": {
          "allow_internet_access": {
            "type": "boolean",
            "description": "false is the same as `denyOut: [\"0.0.0.0/0\"]`."
          },
          "allowOut": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "denyOut": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "egressProxy": {
            "$ref": "#/components/schemas/SandboxEgressProxyConfig"
          },
          "rules": {
            "$ref": "#/components/schemas/SandboxNetworkRules"
          }
        }
      },
      "NewSandboxV2": {
        "type": "object",
        "description": "Sandbox creation request. `volumeMounts` mounts volumes of the team, by\nname, read-write (every problem of them in one 400). `iam` registers\nworkload identity tokens for the sandbox's egress (E2B's 400s when it is\nrefused).\n",
        "required": [
          "templateID"
        ],
        "properties": {
          "templateID": {
            "type": "string",
            "description": "Template ID or name (`name`, `team/name`, `name:tag`). A bare value is\na template ID first, then the team's own name, then the system\nteam's; another team's public template only by its ID or `team/name`.\n"
          },
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "default": 300,
            "description": "Seconds until the sandbox expires."
          },
          "runtime": {
            "$ref": "#/components/schemas/SandboxRuntime"
          },
          "autoPause": {
            "type": "boolean",
            "default": false,
            "description": "Pause instead of kill when the timeout expires."
          },
          "autoPauseMemory": {
            "type": "boolean",
            "default": true,
            "description": "With `autoPause`, keep memory (true) or only files (false)."
          },
          "autoResume": {
            "$ref": "#/components/schemas/SandboxAutoResumeConfig"
          },
          "metadata": {
            "$ref": "#/components/schemas/SandboxMetadata"
          },
          "envVars": {
            "$ref": "#/components/schemas/EnvVars"
          },
          "mcp": {
            "type": "object",
            "nullable": true,
            "additionalProperties": true,
            "description": "MCP gateway configuration (the client starts the gateway itself)."
          },
          "allow_internet_access": {
            "type": "boolean",
            "description": "Outbound internet on (default) or off."
          },
          "network": {
            "$ref": "#/components/schemas/SandboxNetworkConfig"
          },
          "volumeMounts": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxVolumeMount"
            }
          },
          "iam": {
            "$ref": "#/components/schemas/SandboxIam"
          }
        }
      },
      "NewSecret": {
        "type": "object",
        "required": [
          "name",
          "value"
        ],
        "properties": {
          "name": {
            "type": "string",
            "description": "Unique within the team; trimmed and lower-cased before it is stored."
          },
          "value": {
            "type": "string",
            "description": "The secret's first value: non-empty, at most 64 KiB, no NUL. Never returned."
          },
          "metadata": {
            "$ref": "#/components/schemas/SecretMetadata"
          }
        }
      },
      "SecretUpdate": {
        "type": "object",
        "required": [
          "value"
        ],
        "properties": {
          "value": {
            "type": "string",
            "description": "The secret's new value (its next version). Never returned."
          },
          "metadata": {
            "$ref": "#/components/schemas/SecretMetadata"
          }
        }
      },
      "SecretMetadata": {
        "type": "object",
        "description": "At most 32 entries; keys at most 128 bytes, values at most 1024 bytes, 8192 bytes in\nall. Always present in answers, `{}` when unset.\n",
        "additionalProperties": {
          "type": "string"
        }
      },
      "Secret": {
        "type": "object",
        "description": "A secret as the API shows it, never with its value.",
        "required": [
          "secretID",
          "name",
          "currentVersion",
          "metadata",
          "createdAt",
          "updatedAt"
        ],
        "properties": {
          "secretID": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "currentVersion": {
            "type": "integer",
            "format": "int64",
            "description": "The version in use; 1 for a new secret, one more for each update."
          },
          "metadata": {
            "$ref": "#/components/schemas/SecretMetadata"
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "updatedAt": {
            "type": "string",
            "format": "date-time"
          }
        }
      },
      "NewVolume": {
        "type": "object",
        "required": [
          "name"
        ],
        "properties": {
          "name": {
            "type": "string",
            "description": "Letters, digits, `_` and `-`; unique within the team."
          },
          "sizeMB": {
            "type": "integer",
            "minimum": 16,
            "description": "Platform extension - the volume's capacity; the platform's default when left out.\nAt most the team's `volumeSizeMB` limit (400 naming it past that).\n"
          }
        }
      },
      "Volume": {
        "type": "object",
        "required": [
          "volumeID",
          "name"
        ],
        "properties": {
          "volumeID": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "sizeMB": {
            "type": "integer",
            "description": "Platform extension - the volume's capacity."
          },
          "createdAt": {
            "type": "string",
            "format": "date-time",
            "description": "Platform extension."
          }
        }
      },
      "VolumeAndToken": {
        "type": "object",
        "required": [
          "volumeID",
          "name",
          "token"
        ],
        "properties": {
          "volumeID": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "token": {
            "type": "string",
            "description": "Bearer token of the content API for this volume; valid until the volume is deleted."
          },
          "domain": {
            "type": "string",
            "description": "Never set here (the client would send content calls to `api.<domain>`)."
          },
          "sizeMB": {
            "type": "integer",
            "description": "Platform extension - the volume's capacity."
          },
          "usedMB": {
            "type": "integer",
            "description": "Platform extension - what its files take."
          },
          "mountedBy": {
            "type": "array",
            "description": "Platform extension - sandboxes (running or paused) that mount it.",
            "items": {
              "type": "string"
            }
          },
          "createdAt": {
            "type": "string",
            "format": "date-time",
            "description": "Platform extension."
          }
        }
      },
      "VolumeEntryStat": {
        "type": "object",
        "required": [
          "name",
          "type",
          "path",
          "size",
          "mode",
          "uid",
          "gid",
          "atime",
          "mtime",
          "ctime"
        ],
        "properties": {
          "name": {
            "type": "string"
          },
          "type": {
            "type": "string",
            "enum": [
              "unknown",
              "file",
              "directory",
              "symlink"
            ]
          },
          "path": {
            "type": "string",
            "description": "Absolute within the volume's root."
          },
          "target": {
            "type": "string",
            "description": "A symlink's target, as written."
          },
          "size": {
            "type": "integer"
          },
          "mode": {
            "type": "integer",
            "description": "Permission bits only."
          },
          "uid": {
            "type": "integer"
          },
          "gid": {
            "type": "integer"
          },
          "atime": {
            "type": "string",
            "format": "date-time"
          },
          "mtime": {
            "type": "string",
            "format": "date-time"
          },
          "ctime": {
            "type": "string",
            "format": "date-time"
          }
        }
      },
      "VolumeMetadataUpdate": {
        "type": "object",
        "properties": {
          "uid": {
            "type": "integer",
            "minimum": 0,
            "maximum": 4294967294
          },
          "gid": {
            "type": "integer",
            "minimum": 0,
            "maximum": 4294967294
          },
          "mode": {
            "type": "integer",
            "minimum": 0,
            "maximum": 4095
          }
        }
      },
      "SandboxVolumeMount": {
        "type": "object",
        "description": "A volume of the team, by name, mounted at an absolute path in the sandbox.",
        "required": [
          "name",
          "path"
        ],
        "properties": {
          "name": {
            "type": "string"
          },
          "path": {
            "type": "string"
          }
        }
      },
      "SandboxIam": {
        "type": "object",
        "description": "Workload identity tokens the sandbox's egress may carry, by name (at most 5): the\negress proxy puts a JWT-SVID for the sandbox, for the token's audience, in place of\n`${e2b.identity.tokens.NAME}` in the sandbox's header transforms. Kept with the\nsandbox (over pause, resume, fork and restarts), never shown by GET.\n",
        "properties": {
          "tokens": {
            "type": "object",
            "additionalProperties": {
              "type": "object",
              "properties": {
                "audience": {
                  "type": "string",
                  "description": "The token's `aud`, stored as given; required."
                },
                "tokenType": {
                  "type": "string",
                  "description": "Only `JWT-SVID`."
                }
              }
            }
          }
        }
      },
      "JwkSet": {
        "type": "object",
        "required": [
          "keys"
        ],
        "properties": {
          "keys": {
            "type": "array",
            "items": {
              "type": "object",
              "additionalProperties": true,
              "required": [
                "kty",
                "kid"
              ],
              "properties": {
                "kty": {
                  "type": "string"
                },
                "kid": {
                  "type": "string"
                },
                "alg": {
                  "type": "string"
                },
                "use": {
                  "type": "string"
                }
              }
            }
          }
        }
      },
      "OpenIdConfiguration": {
        "type": "object",
        "required": [
          "issuer",
          "jwks_uri",
          "id_token_signing_alg_values_supported",
          "subject_types_supported",
          "response_types_supported"
        ],
        "properties": {
          "issuer": {
            "type": "string"
          },
          "jwks_uri": {
            "type": "string"
          },
          "id_token_signing_alg_values_supported": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "subject_types_supported": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "response_types_supported": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "claims_supported": {
            "type": "array",
            "items": {
              "type": "string"
            }
          }
        }
      },
      "NewSandbox": {
        "type": "object",
        "description": "Legacy creation request; as NewSandboxV2 with a default timeout of 15 s.",
        "required": [
          "templateID"
        ],
        "properties": {
          "templateID": {
            "type": "string"
          },
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "default": 15
          },
          "runtime": {
            "$ref": "#/components/schemas/SandboxRuntime"
          },
          "autoPause": {
            "type": "boolean",
            "default": false
          },
          "autoPauseMemory": {
            "type": "boolean",
            "default": true
          },
          "autoResume": {
            "$ref": "#/components/schemas/SandboxAutoResumeConfig"
          },
          "secure": {
            "type": "boolean",
            "description": "Ignored; access to the sandbox agent is always token-protected."
          },
          "metadata": {
            "$ref": "#/components/schemas/SandboxMetadata"
          },
          "envVars": {
            "$ref": "#/components/schemas/EnvVars"
          },
          "mcp": {
            "type": "object",
            "nullable": true,
            "additionalProperties": true
          },
          "allow_internet_access": {
            "type": "boolean"
          },
          "network": {
            "$ref": "#/components/schemas/SandboxNetworkConfig"
          }
        }
      },
      "Sandbox": {
        "type": "object",
        "description": "A sandbox as returned by create, connect, resume and fork.",
        "required": [
          "sandboxID",
          "templateID",
          "clientID",
          "envdVersion"
        ],
        "properties": {
          "sandboxID": {
            "type": "string"
          },
          "templateID": {
            "type": "string"
          },
          "alias": {
            "type": "string",
            "description": "Name of the template, when it has one."
          },
          "clientID": {
            "type": "string",
            "deprecated": true,
            "description": "Legacy field; the node that runs the sandbox (`local` under `x serve`)."
          },
          "envdVersion": {
            "$ref": "#/components/schemas/EnvdVersion"
          },
          "envdAccessToken": {
            "type": "string",
            "description": "Token for `X-Access-Token` on every request to the sandbox agent."
          },
          "trafficAccessToken": {
            "type": "string",
            "nullable": true,
            "description": "Token needed for the sandbox's URLs when public traffic is disabled."
          },
          "domain": {
            "type": "string",
            "nullable": true,
            "description": "Sandbox domain; the client reaches port P at `https://P-{sandboxID}.{domain}`. `null` means the client's own domain."
          }
        }
      },
      "ListedSandbox": {
        "type": "object",
        "required": [
          "sandboxID",
          "templateID",
          "clientID",
          "startedAt",
          "endAt",
          "cpuCount",
          "memoryMB",
          "diskSizeMB",
          "envdVersion",
          "state"
        ],
        "properties": {
          "sandboxID": {
            "type": "string"
          },
          "templateID": {
            "type": "string"
          },
          "alias": {
            "type": "string"
          },
          "clientID": {
            "type": "string",
            "deprecated": true
          },
          "startedAt": {
            "type": "string",
            "format": "date-time"
          },
          "endAt": {
            "type": "string",
            "format": "date-time",
            "description": "When the sandbox expires."
          },
          "cpuCount": {
            "$ref": "#/components/schemas/CPUCount"
          },
          "memoryMB": {
            "$ref": "#/components/schemas/MemoryMB"
          },
          "diskSizeMB": {
            "$ref": "#/components/schemas/DiskSizeMB"
          },
          "envdVersion": {
            "$ref": "#/components/schemas/EnvdVersion"
          },
          "metadata": {
            "$ref": "#/components/schemas/SandboxMetadata"
          },
          "state": {
            "$ref": "#/components/schemas/SandboxState"
          },
          "pauseKind": {
            "$ref": "#/components/schemas/PauseKind"
          },
          "reason": {
            "$ref": "#/components/schemas/SandboxErrorReason"
          },
          "runtime": {
            "$ref": "#/components/schemas/SandboxRuntime"
          },
          "volumeMounts": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxVolumeMount"
            }
          }
        }
      },
      "SandboxErrorReason": {
        "type": "string",
        "description": "Platform extension, with state `error` only - why the sandbox broke."
      },
      "SandboxDetail": {
        "type": "object",
        "required": [
          "sandboxID",
          "templateID",
          "clientID",
          "startedAt",
          "endAt",
          "cpuCount",
          "memoryMB",
          "diskSizeMB",
          "envdVersion",
          "state"
        ],
        "properties": {
          "sandboxID": {
            "type": "string"
          },
          "templateID": {
            "type": "string"
          },
          "alias": {
            "type": "string"
          },
          "clientID": {
            "type": "string",
            "deprecated": true
          },
          "startedAt": {
            "type": "string",
            "format": "date-time"
          },
          "endAt": {
            "type": "string",
            "format": "date-time"
          },
          "cpuCount": {
            "$ref": "#/components/schemas/CPUCount"
          },
          "memoryMB": {
            "$ref": "#/components/schemas/MemoryMB"
          },
          "diskSizeMB": {
            "$ref": "#/components/schemas/DiskSizeMB"
          },
          "envdVersion": {
            "$ref": "#/components/schemas/EnvdVersion"
          },
          "envdAccessToken": {
            "type": "string",
            "description": "Token for `X-Access-Token` (running or paused sandboxes)."
          },
          "domain": {
            "type": "string",
            "nullable": true
          },
          "metadata": {
            "$ref": "#/components/schemas/SandboxMetadata"
          },
          "state": {
            "$ref": "#/components/schemas/SandboxState"
          },
          "pauseKind": {
            "$ref": "#/components/schemas/PauseKind"
          },
          "reason": {
            "$ref": "#/components/schemas/SandboxErrorReason"
          },
          "runtime": {
            "$ref": "#/components/schemas/SandboxRuntime"
          },
          "allowInternetAccess": {
            "type": "boolean",
            "nullable": true,
            "description": "Internet access as set at creation; `null` when it was not set explicitly."
          },
          "network": {
            "$ref": "#/components/schemas/SandboxNetworkConfig"
          },
          "lifecycle": {
            "$ref": "#/components/schemas/SandboxLifecycle"
          },
          "volumeMounts": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxVolumeMount"
            }
          }
        }
      },
      "SandboxPauseRequest": {
        "type": "object",
        "properties": {
          "memory": {
            "type": "boolean",
            "default": true,
            "description": "Keep the memory state (resume continues processes) or only files (resume reboots)."
          }
        }
      },
      "ConnectSandbox": {
        "type": "object",
        "required": [
          "timeout"
        ],
        "properties": {
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "description": "Seconds from now until the sandbox expires (only extends)."
          },
          "memory": {
            "type": "boolean",
            "description": "false resumes from files only (cold boot). Default true."
          }
        }
      },
      "ConnectSandboxV2": {
        "type": "object",
        "properties": {
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "default": 300,
            "description": "Seconds from now until the sandbox expires (only extends)."
          },
          "memory": {
            "type": "boolean",
            "description": "false resumes from files only (cold boot). Default true."
          }
        }
      },
      "ResumedSandbox": {
        "type": "object",
        "properties": {
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "default": 15
          },
          "autoPause": {
            "type": "boolean",
            "deprecated": true
          },
          "memory": {
            "type": "boolean"
          }
        }
      },
      "SandboxTimeoutRequest": {
        "type": "object",
        "required": [
          "timeout"
        ],
        "properties": {
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "description": "Seconds from now until the sandbox expires."
          }
        }
      },
      "SandboxRefreshRequest": {
        "type": "object",
        "properties": {
          "duration": {
            "type": "integer",
            "minimum": 0,
            "maximum": 3600,
            "description": "Seconds to keep the sandbox alive from now."
          }
        }
      },
      "SandboxForkRequest": {
        "type": "object",
        "properties": {
          "count": {
            "type": "integer",
            "format": "int32",
            "minimum": 1,
            "maximum": 100,
            "default": 1,
            "description": "Number of forks to start: at most the team's `forkCount` limit (16 unless the\noperator says otherwise), and never more than 100.\n"
          },
          "timeout": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "default": 15,
            "description": "Timeout of each fork in seconds."
          }
        }
      },
      "SandboxForkResult": {
        "type": "object",
        "description": "Exactly one of `sandbox` and `error` is set.",
        "properties": {
          "sandbox": {
            "$ref": "#/components/schemas/Sandbox"
          },
          "error": {
            "$ref": "#/components/schemas/Error"
          }
        }
      },
      "SandboxMetric": {
        "type": "object",
        "description": "One resource-usage sample.",
        "required": [
          "timestamp",
          "timestampUnix",
          "cpuCount",
          "cpuUsedPct",
          "memUsed",
          "memTotal",
          "memCache",
          "diskUsed",
          "diskTotal"
        ],
        "properties": {
          "timestamp": {
            "type": "string",
            "format": "date-time",
            "deprecated": true
          },
          "timestampUnix": {
            "type": "integer",
            "format": "int64",
            "description": "Unix time in seconds."
          },
          "cpuCount": {
            "type": "integer",
            "format": "int32"
          },
          "cpuUsedPct": {
            "type": "number",
            "format": "float"
          },
          "memUsed": {
            "type": "integer",
            "format": "int64",
            "description": "Bytes."
          },
          "memTotal": {
            "type": "integer",
            "format": "int64",
            "description": "Bytes."
          },
          "memCache": {
            "type": "integer",
            "format": "int64",
            "description": "Page cache, bytes."
          },
          "diskUsed": {
            "type": "integer",
            "format": "int64",
            "description": "Bytes."
          },
          "diskTotal": {
            "type": "integer",
            "format": "int64",
            "description": "Bytes."
          }
        }
      },
      "SandboxesWithMetrics": {
        "type": "object",
        "required": [
          "sandboxes"
        ],
        "properties": {
          "sandboxes": {
            "type": "object",
            "additionalProperties": {
              "$ref": "#/components/schemas/SandboxMetric"
            }
          }
        }
      },
      "SandboxLog": {
        "type": "object",
        "required": [
          "timestamp",
          "line"
        ],
        "properties": {
          "timestamp": {
            "type": "string",
            "format": "date-time"
          },
          "line": {
            "type": "string"
          }
        }
      },
      "SandboxLogEntry": {
        "type": "object",
        "required": [
          "timestamp",
          "level",
          "message",
          "fields"
        ],
        "properties": {
          "timestamp": {
            "type": "string",
            "format": "date-time"
          },
          "level": {
            "$ref": "#/components/schemas/LogLevel"
          },
          "message": {
            "type": "string"
          },
          "fields": {
            "type": "object",
            "additionalProperties": {
              "type": "string"
            }
          }
        }
      },
      "SandboxLogs": {
        "type": "object",
        "required": [
          "logs",
          "logEntries"
        ],
        "properties": {
          "logs": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxLog"
            }
          },
          "logEntries": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxLogEntry"
            }
          }
        }
      },
      "SandboxLogsV2Response": {
        "type": "object",
        "required": [
          "logs"
        ],
        "properties": {
          "logs": {
            "type": "array",
            "default": [],
            "items": {
              "$ref": "#/components/schemas/SandboxLogEntry"
            }
          }
        }
      },
      "SandboxSnapshotRequest": {
        "type": "object",
        "properties": {
          "name": {
            "type": "string",
            "description": "Name of the snapshot template; an existing template of that name gets a new build instead of a new template being made."
          },
          "memory": {
            "type": "boolean",
            "default": true,
            "description": "Keep the running processes too (gVisor only, and only while the\nsandbox's own processes hold no listening TCP sockets): the sandbox\nis checkpointed for the snapshot and restored right after. `false`\nkeeps files only. The snapshot's `kind` says what was kept.\n"
          }
        }
      },
      "Snapshot": {
        "type": "object",
        "required": [
          "snapshotID",
          "names"
        ],
        "properties": {
          "snapshotID": {
            "type": "string",
            "description": "Snapshot template identifier including the tag:\n`namespace/alias:tag` when a name was given, otherwise\n`<templateID>:<tag>`. Usable as `templateID` in sandbox create.\n",
            "example": "my-team/my-snapshot:default"
          },
          "names": {
            "type": "array",
            "description": "Full names of the snapshot template, `<namespace>/<alias>:<tag>`.",
            "items": {
              "type": "string"
            }
          },
          "kind": {
            "$ref": "#/components/schemas/SnapshotKind"
          }
        }
      },
      "SnapshotKind": {
        "type": "string",
        "enum": [
          "files",
          "memory"
        ],
        "description": "What a snapshot keeps: `files` (sandboxes from it boot afresh, the\ntemplate's start command runs again) or `memory` (files and the running\nprocesses with their memory: sandboxes from it continue them).\n"
      },
      "SandboxEventType": {
        "type": "string",
        "enum": [
          "sandbox.lifecycle.created",
          "sandbox.lifecycle.killed",
          "sandbox.lifecycle.updated",
          "sandbox.lifecycle.paused",
          "sandbox.lifecycle.resumed",
          "sandbox.lifecycle.timed_out",
          "sandbox.lifecycle.error",
          "sandbox.lifecycle.lost"
        ],
        "description": "E2B's five, and three of this platform (extensions): `timed_out` when a sandbox's\ntimeout ran out (a `killed` with `kill_reason: timeout`, or a `paused`, follows);\n`error` when a sandbox failed to start or stopped working by itself (`reason`);\n`lost` when its node stopped answering (beyond one machine).\n"
      },
      "SandboxEventExecution": {
        "type": "object",
        "description": "The sandbox's run that ended or paused (on `killed` and `paused`).",
        "required": [
          "started_at",
          "vcpu_count",
          "memory_mb",
          "execution_time"
        ],
        "properties": {
          "started_at": {
            "type": "string",
            "format": "date-time",
            "description": "When this run began (the create, or the last resume)."
          },
          "vcpu_count": {
            "type": "integer"
          },
          "memory_mb": {
            "type": "integer"
          },
          "execution_time": {
            "type": "integer",
            "description": "Milliseconds from `started_at` to the event."
          }
        }
      },
      "SandboxEventData": {
        "type": "object",
        "required": [
          "sandbox_metadata"
        ],
        "properties": {
          "sandbox_metadata": {
            "$ref": "#/components/schemas/SandboxMetadata"
          },
          "execution": {
            "$ref": "#/components/schemas/SandboxEventExecution"
          },
          "set_timeout": {
            "type": "string",
            "format": "date-time",
            "description": "On `updated` by a new timeout, when the sandbox now times out."
          },
          "kill_reason": {
            "type": "string",
            "enum": [
              "request",
              "timeout",
              "shutdown"
            ],
            "description": "Platform extension, on `killed`: asked for (`request`), its timeout ran out\n(`timeout`) or the platform closed for good (`shutdown`).\n"
          },
          "timeout_action": {
            "type": "string",
            "enum": [
              "kill",
              "pause"
            ],
            "description": "Platform extension, on `timed_out`, what follows."
          },
          "reason": {
            "type": "string",
            "description": "Platform extension, on `error` and `lost`, what went wrong."
          }
        }
      },
      "SandboxEvent": {
        "type": "object",
        "description": "A lifecycle event of a sandbox, as polled and as sent to webhooks.",
        "required": [
          "version",
          "id",
          "type",
          "eventData",
          "sandboxBuildId",
          "sandboxExecutionId",
          "sandboxId",
          "sandboxTeamId",
          "sandboxTemplateId",
          "timestamp"
        ],
        "properties": {
          "version": {
            "type": "string",
            "enum": [
              "v2"
            ]
          },
          "id": {
            "type": "string",
            "description": "The event's ID; the same in every delivery of it."
          },
          "type": {
            "$ref": "#/components/schemas/SandboxEventType"
          },
          "eventData": {
            "$ref": "#/components/schemas/SandboxEventData"
          },
          "sandboxBuildId": {
            "type": "string"
          },
          "sandboxExecutionId": {
            "type": "string",
            "description": "One run of the sandbox (from its create or a resume to the next pause or kill)."
          },
          "sandboxId": {
            "type": "string"
          },
          "sandboxTeamId": {
            "type": "string"
          },
          "sandboxTemplateId": {
            "type": "string"
          },
          "timestamp": {
            "type": "string",
            "format": "date-time"
          }
        }
      },
      "WebhookName": {
        "type": "string",
        "minLength": 1,
        "maxLength": 128
      },
      "WebhookUrl": {
        "type": "string",
        "minLength": 1,
        "maxLength": 2048,
        "description": "An absolute `http://` or `https://` URL."
      },
      "WebhookEvents": {
        "type": "array",
        "minItems": 1,
        "maxItems": 32,
        "items": {
          "$ref": "#/components/schemas/SandboxEventType"
        }
      },
      "WebhookSecret": {
        "type": "string",
        "minLength": 1,
        "maxLength": 256,
        "description": "Prepended to each body to sign it; never shown again."
      },
      "NewWebhook": {
        "type": "object",
        "required": [
          "name",
          "url",
          "events",
          "signatureSecret"
        ],
        "properties": {
          "name": {
            "$ref": "#/components/schemas/WebhookName"
          },
          "url": {
            "$ref": "#/components/schemas/WebhookUrl"
          },
          "enabled": {
            "type": "boolean",
            "default": true
          },
          "events": {
            "$ref": "#/components/schemas/WebhookEvents"
          },
          "signatureSecret": {
            "$ref": "#/components/schemas/WebhookSecret"
          }
        }
      },
      "WebhookUpdate": {
        "type": "object",
        "description": "The fields to replace; at least one.",
        "properties": {
          "name": {
            "$ref": "#/components/schemas/WebhookName"
          },
          "url": {
            "$ref": "#/components/schemas/WebhookUrl"
          },
          "enabled": {
            "type": "boolean"
          },
          "events": {
            "$ref": "#/components/schemas/WebhookEvents"
          },
          "signatureSecret": {
            "$ref": "#/components/schemas/WebhookSecret"
          }
        }
      },
      "Webhook": {
        "type": "object",
        "description": "A webhook, never with its signature secret.",
        "required": [
          "id",
          "teamID",
          "teamId",
          "name",
          "createdAt",
          "enabled",
          "url",
          "events"
        ],
        "properties": {
          "id": {
            "type": "string"
          },
          "teamID": {
            "type": "string"
          },
          "teamId": {
            "type": "string",
            "description": "The same as `teamID` (E2B answers both)."
          },
          "name": {
            "type": "string"
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "enabled": {
            "type": "boolean"
          },
          "url": {
            "type": "string"
          },
          "events": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/SandboxEventType"
            }
          }
        }
      },
      "WebhookDeliveryAttempt": {
        "type": "object",
        "description": "One attempt to deliver an event to a webhook.",
        "required": [
          "deliveryID",
          "eventID",
          "eventType",
          "attempt",
          "timestamp",
          "statusCode",
          "error",
          "durationMs",
          "outcome"
        ],
        "properties": {
          "deliveryID": {
            "type": "string",
            "description": "The attempt's `e2b-delivery-id`."
          },
          "eventID": {
            "type": "string"
          },
          "eventType": {
            "$ref": "#/components/schemas/SandboxEventType"
          },
          "attempt": {
            "type": "integer",
            "minimum": 1,
            "description": "1 for the first attempt at this event, 2 for its first retry, ..."
          },
          "timestamp": {
            "type": "string",
            "format": "date-time"
          },
          "statusCode": {
            "type": "integer",
            "nullable": true,
            "description": "The endpoint's HTTP status; null when it gave none (see `error`)."
          },
          "error": {
            "type": "string",
            "nullable": true,
            "description": "Why the attempt failed, when it did."
          },
          "durationMs": {
            "type": "integer"
          },
          "outcome": {
            "type": "string",
            "enum": [
              "delivered",
              "retrying",
              "failed"
            ],
            "description": "`delivered` (a 2xx), `retrying` (another attempt follows) or `failed` (no more\nattempts: too many, or the event is too old).\n"
          }
        }
      },
      "TemplateBuildStatus": {
        "type": "string",
        "enum": [
          "building",
          "waiting",
          "ready",
          "error"
        ],
        "description": "`waiting` registered, not started; `building` running; `ready` done;\n`error` failed (see `reason`). The client stops polling on anything\nother than `waiting`/`building`, and treats unknown values as failure.\n"
      },
      "TeamUser": {
        "type": "object",
        "required": [
          "id",
          "email"
        ],
        "properties": {
          "id": {
            "type": "string",
            "format": "uuid"
          },
          "email": {
            "type": "string",
            "nullable": true,
            "deprecated": true
          }
        }
      },
      "TemplateBuild": {
        "type": "object",
        "description": "One build of a template.",
        "required": [
          "buildID",
          "status",
          "createdAt",
          "updatedAt",
          "cpuCount",
          "memoryMB"
        ],
        "properties": {
          "buildID": {
            "type": "string",
            "format": "uuid"
          },
          "status": {
            "$ref": "#/components/schemas/TemplateBuildStatus"
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "updatedAt": {
            "type": "string",
            "format": "date-time"
          },
          "finishedAt": {
            "type": "string",
            "format": "date-time"
          },
          "cpuCount": {
            "$ref": "#/components/schemas/CPUCount"
          },
          "memoryMB": {
            "$ref": "#/components/schemas/MemoryMB"
          },
          "diskSizeMB": {
            "$ref": "#/components/schemas/DiskSizeMB"
          },
          "envdVersion": {
            "$ref": "#/components/schemas/EnvdVersion"
          }
        }
      },
      "TemplateWithBuilds": {
        "type": "object",
        "description": "A template with one page of its builds (newest first).",
        "required": [
          "templateID",
          "public",
          "aliases",
          "names",
          "createdAt",
          "updatedAt",
          "lastSpawnedAt",
          "spawnCount",
          "builds",
          "nextToken"
        ],
        "properties": {
          "warmPool": {
            "$ref": "#/components/schemas/TemplateWarmPool"
          },
          "owner": {
            "$ref": "#/components/schemas/TemplateOwner"
          },
          "templateID": {
            "type": "string"
          },
          "public": {
            "type": "boolean",
            "description": "true when any team may use the template; false when only the owning team may."
          },
          "aliases": {
            "type": "array",
            "deprecated": true,
            "items": {
              "type": "string"
            }
          },
          "names": {
            "type": "array",
            "description": "Names, `namespace/alias` when namespaced.",
            "items": {
              "type": "string"
            }
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "updatedAt": {
            "type": "string",
            "format": "date-time"
          },
          "lastSpawnedAt": {
            "type": "string",
            "format": "date-time",
            "nullable": true,
            "description": "When a sandbox was last started from the template."
          },
          "spawnCount": {
            "type": "integer",
            "format": "int64",
            "description": "Number of sandboxes started from the template."
          },
          "builds": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/TemplateBuild"
            }
          },
          "nextToken": {
            "type": "string",
            "nullable": true,
            "description": "Extension of this platform. Cursor of the next page of builds (same value as the `X-Next-Token` header); `null` on the last page."
          }
        }
      },
      "Template": {
        "type": "object",
        "description": "A template as listed, with its latest successful build.",
        "required": [
          "templateID",
          "buildID",
          "cpuCount",
          "memoryMB",
          "diskSizeMB",
          "public",
          "aliases",
          "names",
          "createdAt",
          "updatedAt",
          "createdBy",
          "lastSpawnedAt",
          "spawnCount",
          "buildCount",
          "envdVersion",
          "buildStatus"
        ],
        "properties": {
          "templateID": {
            "type": "string"
          },
          "buildID": {
            "type": "string",
            "description": "Latest successful build."
          },
          "cpuCount": {
            "$ref": "#/components/schemas/CPUCount"
          },
          "memoryMB": {
            "$ref": "#/components/schemas/MemoryMB"
          },
          "diskSizeMB": {
            "$ref": "#/components/schemas/DiskSizeMB"
          },
          "public": {
            "type": "boolean"
          },
          "aliases": {
            "type": "array",
            "deprecated": true,
            "items": {
              "type": "string"
            }
          },
          "names": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "updatedAt": {
            "type": "string",
            "format": "date-time"
          },
          "createdBy": {
            "type": "object",
            "nullable": true,
            "description": "User who created the template; `null` when unknown (e.g. created with an API key).",
            "allOf": [
              {
                "$ref": "#/components/schemas/TeamUser"
              }
            ]
          },
          "lastSpawnedAt": {
            "type": "string",
            "format": "date-time",
            "nullable": true
          },
          "spawnCount": {
            "type": "integer",
            "format": "int64"
          },
          "buildCount": {
            "type": "integer",
            "format": "int32"
          },
          "envdVersion": {
            "$ref": "#/components/schemas/EnvdVersion"
          },
          "buildStatus": {
            "$ref": "#/components/schemas/TemplateBuildStatus"
          },
          "owner": {
            "$ref": "#/components/schemas/TemplateOwner"
          }
        }
      },
      "TemplateOwner": {
        "type": "string",
        "enum": [
          "team",
          "system",
          "public"
        ],
        "description": "Extension of this platform: whose a template is, as the calling team sees it. `team`\nits own; `system` the platform's (`base` and the templates that ship with it), which\nevery team may use and none may change; `public` another team's, made public.\n"
      },
      "TemplateAliasResponse": {
        "type": "object",
        "required": [
          "templateID",
          "public"
        ],
        "properties": {
          "templateID": {
            "type": "string"
          },
          "public": {
            "type": "boolean"
          }
        }
      },
      "TemplateWarmPool": {
        "type": "object",
        "description": "Extension: how many sandboxes of this template's builds the platform keeps ready, so\nthat creates need not boot. The pool sizes itself to demand between `min` and `max`\n(the platform's own defaults where a bound is left out).\n",
        "properties": {
          "min": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "maximum": 64
          },
          "max": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "maximum": 64
          }
        }
      },
      "TemplateUpdateRequest": {
        "type": "object",
        "properties": {
          "public": {
            "type": "boolean",
            "description": "Make the template usable by every team (true) or only its own (false)."
          },
          "warmPool": {
            "$ref": "#/components/schemas/TemplateWarmPool"
          }
        }
      },
      "TemplateUpdateResponse": {
        "type": "object",
        "required": [
          "names"
        ],
        "properties": {
          "names": {
            "type": "array",
            "items": {
              "type": "string"
            }
          }
        }
      },
      "TemplateBuildRequestV3": {
        "type": "object",
        "properties": {
          "name": {
            "type": "string",
            "description": "Template name, optionally `name:tag`."
          },
          "tags": {
            "type": "array",
            "description": "Tags to point at the new build.",
            "items": {
              "type": "string"
            }
          },
          "cpuCount": {
            "$ref": "#/components/schemas/CPUCount"
          },
          "memoryMB": {
            "$ref": "#/components/schemas/MemoryMB"
          },
          "minFreeDiskMb": {
            "type": "integer",
            "format": "int32",
            "minimum": 0,
            "description": "Free disk space (MiB) a sandbox of the build must have at least, after the build's\nsteps (E2B grows the template's filesystem to it). A sandbox's disk here holds only\nits own writes (the build's layers lie below it), and a build gets the largest disk\nthe team's sandboxes may have (`x serve --disk-size`, or the team's lower limit), so\nevery sandbox of the build starts with that disk's free space, whatever the steps\nwrote. A value above it is refused (400, naming the most); 0 or none asks nothing.\n"
          },
          "alias": {
            "type": "string",
            "deprecated": true,
            "description": "Old name of `name`."
          },
          "teamID": {
            "type": "string",
            "deprecated": true,
            "description": "Ignored; the team comes from the API key."
          }
        }
      },
      "TemplateRequestResponseV3": {
        "type": "object",
        "required": [
          "templateID",
          "buildID",
          "public",
          "aliases",
          "names",
          "tags"
        ],
        "properties": {
          "templateID": {
            "type": "string"
          },
          "buildID": {
            "type": "string",
            "description": "The new build (UUID)."
          },
          "public": {
            "type": "boolean"
          },
          "aliases": {
            "type": "array",
            "deprecated": true,
            "items": {
              "type": "string"
            }
          },
          "names": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "tags": {
            "type": "array",
            "description": "Tags that will point at the build.",
            "items": {
              "type": "string"
            }
          }
        }
      },
      "TemplateBuildFileUpload": {
        "type": "object",
        "required": [
          "present"
        ],
        "properties": {
          "present": {
            "type": "boolean",
            "description": "The archive with this hash is already stored."
          },
          "url": {
            "type": "string",
            "description": "Absolute URL to PUT the archive to; it carries its own authorisation (no API key is sent)."
          },
          "headers": {
            "type": "object",
            "description": "Extra headers the client must send with the PUT.",
            "additionalProperties": {
              "type": "string"
            }
          }
        }
      },
      "TemplateStep": {
        "type": "object",
        "description": "One build step. Arguments by type: `RUN` [command, user?];\n`COPY` [src, dest, user ('' = default), mode (octal string, '' = keep)];\n`ENV` [name1, value1, name2, value2, ...]; `WORKDIR` [dir]; `USER` [user].\nCOPY steps also carry client-side fields (`forceUpload`, `resolveSymlinks`,\n`gzip`), so unknown properties must be accepted.\n",
        "required": [
          "type"
        ],
        "properties": {
          "type": {
            "type": "string",
            "enum": [
              "RUN",
              "COPY",
              "ENV",
              "WORKDIR",
              "USER"
            ]
          },
          "args": {
            "type": "array",
            "default": [],
            "items": {
              "type": "string"
            }
          },
          "force": {
            "type": "boolean",
            "default": false,
            "description": "Run the step even if a cached layer exists."
          },
          "filesHash": {
            "type": "string",
            "description": "COPY only; hash of the uploaded archive (see the files endpoints)."
          }
        }
      },
      "AWSRegistry": {
        "type": "object",
        "required": [
          "type",
          "awsAccessKeyId",
          "awsSecretAccessKey",
          "awsRegion"
        ],
        "properties": {
          "type": {
            "type": "string",
            "enum": [
              "aws"
            ]
          },
          "awsAccessKeyId": {
            "type": "string"
          },
          "awsSecretAccessKey": {
            "type": "string"
          },
          "awsRegion": {
            "type": "string"
          }
        }
      },
      "GCPRegistry": {
        "type": "object",
        "required": [
          "type",
          "serviceAccountJson"
        ],
        "properties": {
          "type": {
            "type": "string",
            "enum": [
              "gcp"
            ]
          },
          "serviceAccountJson": {
            "type": "string"
          }
        }
      },
      "GeneralRegistry": {
        "type": "object",
        "required": [
          "type",
          "username",
          "password"
        ],
        "properties": {
          "type": {
            "type": "string",
            "enum": [
              "registry"
            ]
          },
          "username": {
            "type": "string"
          },
          "password": {
            "type": "string"
          }
        }
      },
      "FromImageRegistry": {
        "description": "Credentials for pulling `fromImage`.",
        "oneOf": [
          {
            "$ref": "#/components/schemas/AWSRegistry"
          },
          {
            "$ref": "#/components/schemas/GCPRegistry"
          },
          {
            "$ref": "#/components/schemas/GeneralRegistry"
          }
        ],
        "discriminator": {
          "propertyName": "type",
          "mapping": {
            "aws": "#/components/schemas/AWSRegistry",
            "gcp": "#/components/schemas/GCPRegistry",
            "registry": "#/components/schemas/GeneralRegistry"
          }
        }
      },
      "TemplateBuildStartV2": {
        "type": "object",
        "description": "What to build. Exactly one of `fromImage` and `fromTemplate` is set.",
        "properties": {
          "fromImage": {
            "type": "string",
            "description": "Base OCI image. The client's default is `e2bdev/base` (map it to the `base` template).\nA registry reference as Docker names it (`python:3.12`, `host:port/ns/img:tag`,\n`name@sha256:…`) is pulled, with the credentials of `fromImageRegistry` when given\n(`aws` is refused with 400); a pull that fails fails the build with the reason. Images\non the platform host are read from its import directory (`<dataDir>/import`) as\n`oci:<dir>:<tag>`, `oci-archive:<file>:<tag>` or `docker-archive:<file>`.\n"
          },
          "fromImageRegistry": {
            "$ref": "#/components/schemas/FromImageRegistry"
          },
          "fromTemplate": {
            "type": "string",
            "description": "Base template (name, `name:tag` or ID)."
          },
          "steps": {
            "type": "array",
            "default": [],
            "items": {
              "$ref": "#/components/schemas/TemplateStep"
            }
          },
          "startCmd": {
            "type": "string",
            "description": "Command started in the sandbox after the build; snapshotted running."
          },
          "readyCmd": {
            "type": "string",
            "description": "Command that exits 0 once the start command is ready."
          },
          "force": {
            "type": "boolean",
            "default": false,
            "description": "Ignore the layer cache for the whole build."
          }
        }
      },
      "BuildLogEntry": {
        "type": "object",
        "required": [
          "timestamp",
          "message",
          "level"
        ],
        "properties": {
          "timestamp": {
            "type": "string",
            "format": "date-time"
          },
          "message": {
            "type": "string"
          },
          "level": {
            "$ref": "#/components/schemas/LogLevel"
          },
          "step": {
            "type": "string",
            "description": "Step the entry belongs to."
          }
        }
      },
      "BuildStatusReason": {
        "type": "object",
        "required": [
          "message"
        ],
        "properties": {
          "message": {
            "type": "string",
            "description": "Why the build failed."
          },
          "step": {
            "type": "string",
            "description": "Failed step, `base`, `finalize` or the step's 1-based position as a decimal string (the client maps it to its stack trace)."
          },
          "logEntries": {
            "type": "array",
            "default": [],
            "items": {
              "$ref": "#/components/schemas/BuildLogEntry"
            }
          }
        }
      },
      "TemplateBuildInfo": {
        "type": "object",
        "required": [
          "templateID",
          "buildID",
          "status",
          "logEntries",
          "logs"
        ],
        "properties": {
          "templateID": {
            "type": "string"
          },
          "buildID": {
            "type": "string"
          },
          "status": {
            "$ref": "#/components/schemas/TemplateBuildStatus"
          },
          "logEntries": {
            "type": "array",
            "default": [],
            "description": "Log entries from `logsOffset` on; always present, empty at the end.",
            "items": {
              "$ref": "#/components/schemas/BuildLogEntry"
            }
          },
          "logs": {
            "type": "array",
            "default": [],
            "deprecated": true,
            "description": "Always empty; use `logEntries`.",
            "items": {
              "type": "string"
            }
          },
          "reason": {
            "$ref": "#/components/schemas/BuildStatusReason"
          }
        }
      },
      "TemplateBuildLogsResponse": {
        "type": "object",
        "required": [
          "logs"
        ],
        "properties": {
          "logs": {
            "type": "array",
            "default": [],
            "items": {
              "$ref": "#/components/schemas/BuildLogEntry"
            }
          }
        }
      },
      "AssignTemplateTagsRequest": {
        "type": "object",
        "required": [
          "target",
          "tags"
        ],
        "properties": {
          "target": {
            "type": "string",
            "description": "Target template in `name:tag` form."
          },
          "tags": {
            "type": "array",
            "minItems": 1,
            "items": {
              "type": "string"
            }
          }
        }
      },
      "AssignedTemplateTags": {
        "type": "object",
        "required": [
          "tags",
          "buildID"
        ],
        "properties": {
          "tags": {
            "type": "array",
            "description": "Tags now assigned.",
            "items": {
              "type": "string"
            }
          },
          "buildID": {
            "type": "string",
            "format": "uuid",
            "description": "Build the tags point at."
          }
        }
      },
      "DeleteTemplateTagsRequest": {
        "type": "object",
        "required": [
          "name",
          "tags"
        ],
        "properties": {
          "name": {
            "type": "string",
            "description": "Template name."
          },
          "tags": {
            "type": "array",
            "minItems": 1,
            "items": {
              "type": "string"
            }
          }
        }
      },
      "TemplateTag": {
        "type": "object",
        "required": [
          "tag",
          "buildID",
          "createdAt"
        ],
        "properties": {
          "tag": {
            "type": "string"
          },
          "buildID": {
            "type": "string",
            "format": "uuid"
          },
          "createdAt": {
            "type": "string",
            "format": "date-time",
            "description": "When the tag was assigned."
          }
        }
      },
      "IdentifierMaskingDetails": {
        "type": "object",
        "description": "How a key or token is shown without its secret (E2B's `mask`).",
        "required": [
          "prefix",
          "valueLength",
          "maskedValuePrefix",
          "maskedValueSuffix"
        ],
        "properties": {
          "prefix": {
            "type": "string",
            "description": "The prefix every such secret has (`e2b_`, `sk_e2b_`)."
          },
          "valueLength": {
            "type": "integer",
            "description": "Length of the secret after the prefix."
          },
          "maskedValuePrefix": {
            "type": "string",
            "description": "First characters after the prefix."
          },
          "maskedValueSuffix": {
            "type": "string",
            "description": "Last characters."
          }
        }
      },
      "NewAccessToken": {
        "type": "object",
        "required": [
          "name"
        ],
        "properties": {
          "name": {
            "type": "string",
            "minLength": 1,
            "maxLength": 100
          },
          "refreshable": {
            "type": "boolean",
            "default": false,
            "description": "Also make a refresh token (`refreshToken`), for `POST /oauth/token`."
          }
        }
      },
      "AccessToken": {
        "type": "object",
        "description": "An access token without its secret part.",
        "required": [
          "id",
          "name",
          "mask",
          "createdAt",
          "lastUsed"
        ],
        "properties": {
          "id": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "mask": {
            "$ref": "#/components/schemas/IdentifierMaskingDetails"
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "lastUsed": {
            "type": "string",
            "format": "date-time",
            "nullable": true
          }
        }
      },
      "CreatedAccessToken": {
        "description": "A new access token including its plaintext, shown only once.",
        "allOf": [
          {
            "$ref": "#/components/schemas/AccessToken"
          },
          {
            "type": "object",
            "required": [
              "token"
            ],
            "properties": {
              "token": {
                "type": "string",
                "pattern": "^sk_e2b_[0-9a-f]{40}$",
                "description": "The plaintext token."
              },
              "refreshToken": {
                "type": "string",
                "description": "With `refreshable`, the token's refresh token (`POST /oauth/token`)."
              }
            }
          }
        ]
      },
      "OAuthTokens": {
        "type": "object",
        "required": [
          "access_token",
          "refresh_token",
          "token_type"
        ],
        "properties": {
          "access_token": {
            "type": "string",
            "description": "A new access token (`sk_e2b_…`)."
          },
          "refresh_token": {
            "type": "string",
            "description": "The refresh token for the next refresh (each is used once)."
          },
          "token_type": {
            "type": "string",
            "enum": [
              "Bearer"
            ]
          }
        }
      },
      "OAuthError": {
        "type": "object",
        "required": [
          "error"
        ],
        "properties": {
          "error": {
            "type": "string",
            "enum": [
              "invalid_request",
              "invalid_grant",
              "unsupported_grant_type"
            ]
          },
          "error_description": {
            "type": "string"
          }
        }
      },
      "ClusterNode": {
        "type": "object",
        "required": [
          "nodeID",
          "state",
          "startedAt",
          "heartbeatAt",
          "capacity"
        ],
        "properties": {
          "nodeID": {
            "type": "string"
          },
          "state": {
            "type": "string",
            "enum": [
              "ready",
              "draining",
              "down"
            ]
          },
          "startedAt": {
            "type": "string",
            "format": "date-time"
          },
          "heartbeatAt": {
            "type": "string",
            "format": "date-time"
          },
          "downAt": {
            "type": "string",
            "format": "date-time"
          },
          "capacity": {
            "type": "object",
            "required": [
              "cpus",
              "memoryTotalMB",
              "memoryFreeMB",
              "sandboxes",
              "maxSandboxes",
              "load",
              "runtimes",
              "warmPoolMembers"
            ],
            "properties": {
              "cpus": {
                "type": "integer"
              },
              "memoryTotalMB": {
                "type": "integer"
              },
              "memoryFreeMB": {
                "type": "integer",
                "description": "Memory available for sandboxes, less the node's reserve."
              },
              "sandboxes": {
                "type": "integer",
                "description": "Sandboxes starting or running on it."
              },
              "maxSandboxes": {
                "type": "integer"
              },
              "load": {
                "type": "number",
                "description": "One-minute load average."
              },
              "runtimes": {
                "type": "array",
                "items": {
                  "type": "string"
                }
              },
              "warmPoolMembers": {
                "type": "integer",
                "description": "Ready sandboxes kept warm on it."
              }
            }
          }
        }
      },
      "Team": {
        "type": "object",
        "required": [
          "teamID",
          "name",
          "apiKey",
          "isDefault"
        ],
        "properties": {
          "teamID": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "apiKey": {
            "type": "string",
            "description": "An API key of the team for the caller (see `GET /teams`)."
          },
          "isDefault": {
            "type": "boolean"
          }
        }
      },
      "TeamLimits": {
        "type": "object",
        "description": "Limits of one team; a null limit has no value of the team's own.",
        "required": [
          "sandboxes",
          "cpuCount",
          "memoryMB",
          "diskSizeMB",
          "timeoutSeconds",
          "volumes",
          "volumeSizeMB",
          "templates",
          "snapshots",
          "forkCount",
          "uploads",
          "uploadsMB"
        ],
        "properties": {
          "sandboxes": {
            "type": "integer",
            "nullable": true,
            "description": "Sandboxes starting, running or paused at once."
          },
          "cpuCount": {
            "type": "integer",
            "nullable": true,
            "description": "vCPUs of one sandbox."
          },
          "memoryMB": {
            "type": "integer",
            "nullable": true,
            "description": "Memory of one sandbox, MiB."
          },
          "diskSizeMB": {
            "type": "integer",
            "nullable": true,
            "description": "Disk of one sandbox, MiB."
          },
          "timeoutSeconds": {
            "type": "integer",
            "nullable": true,
            "description": "The longest timeout a sandbox may be given."
          },
          "volumes": {
            "type": "integer",
            "nullable": true,
            "description": "Volumes held at once."
          },
          "volumeSizeMB": {
            "type": "integer",
            "nullable": true,
            "description": "Capacity of one volume, MiB."
          },
          "templates": {
            "type": "integer",
            "nullable": true,
            "description": "Templates held at once, those made by snapshots included."
          },
          "snapshots": {
            "type": "integer",
            "nullable": true,
            "description": "Snapshots held at once (each fork takes one)."
          },
          "forkCount": {
            "type": "integer",
            "nullable": true,
            "description": "Sandboxes one fork request may start."
          },
          "uploads": {
            "type": "integer",
            "nullable": true,
            "description": "Template build archives (COPY steps) kept; the oldest go first past it."
          },
          "uploadsMB": {
            "type": "integer",
            "nullable": true,
            "description": "MiB of template build archives kept; the oldest go first past it."
          }
        }
      },
      "TeamDetail": {
        "type": "object",
        "required": [
          "teamID",
          "name",
          "namespace",
          "createdAt",
          "limits",
          "effectiveLimits",
          "usage"
        ],
        "properties": {
          "teamID": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "namespace": {
            "type": "string",
            "description": "Prefix of the team's template names (`namespace/name`)."
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "limits": {
            "$ref": "#/components/schemas/TeamLimits"
          },
          "effectiveLimits": {
            "description": "The limits that apply (the team's where set, else the platform's; null when there is none).",
            "allOf": [
              {
                "$ref": "#/components/schemas/TeamLimits"
              }
            ]
          },
          "usage": {
            "type": "object",
            "required": [
              "liveSandboxes",
              "runningSandboxes",
              "pausedSandboxes",
              "sandboxSecondsLast30Days",
              "volumes",
              "templates",
              "snapshots"
            ],
            "properties": {
              "liveSandboxes": {
                "type": "integer",
                "description": "Sandboxes starting, running or paused (what the `sandboxes` limit counts)."
              },
              "volumes": {
                "type": "integer",
                "description": "Volumes the team holds (what the `volumes` limit counts)."
              },
              "templates": {
                "type": "integer",
                "description": "Templates the team holds, snapshots' included (what the `templates` limit counts)."
              },
              "snapshots": {
                "type": "integer",
                "description": "Snapshots the team holds (what the `snapshots` limit counts)."
              },
              "runningSandboxes": {
                "type": "integer"
              },
              "pausedSandboxes": {
                "type": "integer"
              },
              "sandboxSecondsLast30Days": {
                "type": "integer",
                "description": "Seconds sandboxes of the team ran in the last 30 days."
              }
            }
          }
        }
      },
      "TeamMetric": {
        "type": "object",
        "required": [
          "timestamp",
          "timestampUnix",
          "concurrentSandboxes",
          "sandboxStartRate"
        ],
        "properties": {
          "timestamp": {
            "type": "string",
            "format": "date-time",
            "deprecated": true
          },
          "timestampUnix": {
            "type": "integer",
            "format": "int64",
            "description": "Start of the step, unix seconds."
          },
          "concurrentSandboxes": {
            "type": "integer",
            "format": "int32",
            "description": "Sandboxes running at the end of the step (the most during it)."
          },
          "sandboxStartRate": {
            "type": "number",
            "format": "float",
            "description": "Sandboxes started per second during the step."
          }
        }
      },
      "MaxTeamMetric": {
        "type": "object",
        "required": [
          "timestamp",
          "timestampUnix",
          "value"
        ],
        "properties": {
          "timestamp": {
            "type": "string",
            "format": "date-time",
            "deprecated": true
          },
          "timestampUnix": {
            "type": "integer",
            "format": "int64"
          },
          "value": {
            "type": "number"
          }
        }
      },
      "NewApiKey": {
        "type": "object",
        "required": [
          "name"
        ],
        "properties": {
          "name": {
            "type": "string",
            "minLength": 1,
            "maxLength": 100
          }
        }
      },
      "ApiKey": {
        "type": "object",
        "description": "An API key without its secret part. `id`, `mask`, `lastUsed` and `createdBy` are E2B's\nnames (`TeamAPIKey`); `apiKeyID`, `maskedKey` and `lastUsedAt` say the same.\n",
        "required": [
          "apiKeyID",
          "id",
          "name",
          "maskedKey",
          "mask",
          "createdAt",
          "lastUsedAt",
          "lastUsed",
          "createdBy"
        ],
        "properties": {
          "apiKeyID": {
            "type": "string"
          },
          "id": {
            "type": "string"
          },
          "mask": {
            "$ref": "#/components/schemas/IdentifierMaskingDetails"
          },
          "lastUsed": {
            "type": "string",
            "format": "date-time",
            "nullable": true
          },
          "createdBy": {
            "type": "object",
            "nullable": true,
            "description": "Who made the key; always null (the platform has no users)."
          },
          "name": {
            "type": "string"
          },
          "maskedKey": {
            "type": "string",
            "description": "`e2b_`, the first 4 and the last 4 hex digits, e.g. `e2b_1a2b...9f0e`."
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "lastUsedAt": {
            "type": "string",
            "format": "date-time",
            "nullable": true
          }
        }
      },
      "CreatedApiKey": {
        "description": "A new API key including its plaintext, shown only once.",
        "allOf": [
          {
            "$ref": "#/components/schemas/ApiKey"
          },
          {
            "type": "object",
            "required": [
              "key"
            ],
            "properties": {
              "key": {
                "type": "string",
                "pattern": "^e2b_[0-9a-f]{40}$",
                "description": "The plaintext key."
              }
            }
          }
        ]
      }
    }
  }
};
