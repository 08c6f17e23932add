{{/* Names and labels. */}}
{{- define "moniro.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "moniro.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: moniro
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Labels of objects that belong to no single service. */}}
{{- define "moniro.instanceLabels" -}}
{{ include "moniro.labels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of one service: call with (dict "root" $ "name" $name). */}}
{{- define "moniro.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "moniro-%s" .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "moniro.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else -}}
{{- printf "%s-secrets" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.agentsConfigMap" -}}
{{- if .Values.agents.existingConfigMap -}}
{{- .Values.agents.existingConfigMap -}}
{{- else -}}
{{- printf "%s-agents" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.workflowsConfigMap" -}}
{{- if .Values.workflows.existingConfigMap -}}
{{- .Values.workflows.existingConfigMap -}}
{{- else -}}
{{- printf "%s-workflows" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.workspacesClaim" -}}
{{- if .Values.workspaces.persistence.existingClaim -}}
{{- .Values.workspaces.persistence.existingClaim -}}
{{- else -}}
{{- printf "%s-workspaces" (include "moniro.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "moniro.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* NATS URL the services use: the release's own NATS, or nats.url. */}}
{{- define "moniro.natsUrl" -}}
{{- if .Values.nats.deploy -}}
{{- if .Values.nats.url -}}
{{- fail "nats.url is set while nats.deploy is true: set nats.deploy=false to use your NATS at nats.url, or leave nats.url empty" -}}
{{- end -}}
{{- printf "nats://%s-nats:4222" (include "moniro.fullname" .) -}}
{{- else -}}
{{- required "nats.url is required when nats.deploy is false: the URL of your NATS (with JetStream)" .Values.nats.url -}}
{{- end -}}
{{- end -}}

{{/* Redis URL the services use: the release's own Redis, or redis.url. */}}
{{- define "moniro.redisUrl" -}}
{{- if .Values.redis.deploy -}}
{{- if .Values.redis.url -}}
{{- fail "redis.url is set while redis.deploy is true: set redis.deploy=false to use your Redis at redis.url, or leave redis.url empty" -}}
{{- end -}}
{{- printf "redis://%s-redis:6379" (include "moniro.fullname" .) -}}
{{- else -}}
{{- required "redis.url is required when redis.deploy is false: the URL of your Redis" .Values.redis.url -}}
{{- end -}}
{{- end -}}

{{/*
A password of the chart's Secret: the value given, else the one the Secret
already holds (kept on upgrades), else, when `generate`, a new random one
(letters and digits, starting with a letter, as NATS reads it from its config).
Each key is decided once per render (remembered in .Release, the one map every
template of a render shares): the pods' checksum/secret renders the Secret a
second time, and must sum the passwords the Secret gets, or the first upgrade
after an install would see a change and roll every pod.
Call with (dict "root" $ "key" "MONIRO_REDIS_PASSWORD" "value" .Values.secrets.redisPassword "generate" true).
*/}}
{{- define "moniro.password" -}}
{{- if not (hasKey .root.Release "moniroPasswords") -}}
{{- $_ := set .root.Release "moniroPasswords" dict -}}
{{- end -}}
{{- $decided := .root.Release.moniroPasswords -}}
{{- if not (hasKey $decided .key) -}}
{{- $kept := "" -}}
{{- $secret := lookup "v1" "Secret" .root.Release.Namespace (include "moniro.secretName" .root) -}}
{{- if $secret -}}
{{- $kept = index ($secret.data | default dict) .key | default "" | b64dec -}}
{{- end -}}
{{- $generated := "" -}}
{{- if .generate -}}
{{- $generated = printf "p%s" (randAlphaNum 31) -}}
{{- end -}}
{{- $_ := set $decided .key (.value | default $kept | default $generated) -}}
{{- end -}}
{{- index $decided .key -}}
{{- end -}}

{{/*
checksum/secret of a pod: the sha256 of the Secrets the chart renders that the
pod reads (the chart's Secret; with `webhooks`, the gateway's webhook Secret
too), so `helm upgrade` with a changed password or key rolls it. Empty when
the chart renders none of them: it cannot see a Secret you manage
(secrets.existingSecret, webhooks.existingSecret), so after changing one,
restart the pods yourself (kubectl rollout restart).
Call with (dict "root" $ "webhooks" true).
*/}}
{{- define "moniro.secretChecksum" -}}
{{- $rendered := include (print .root.Template.BasePath "/secret.yaml") .root -}}
{{- if .webhooks -}}
{{- $rendered = print $rendered (include (print .root.Template.BasePath "/webhooks-secret.yaml") .root) -}}
{{- end -}}
{{- if trim $rendered -}}
{{- sha256sum $rendered -}}
{{- end -}}
{{- end -}}

{{/*
The variables the chart derives for the services' logins, their isolation and
their secrets, by name: why, and the chart value to set instead (<name>: the
service). services.<name>.env may not set them: a variable named twice in a
container's env is given its later value, and env wins over the ConfigMap, so
an override would quietly replace the chart's (MONIRO_REDIS_PREFIX, say, would
put the service's keys outside the `~<prefix>*` of the release's Redis user).
*/}}
{{- define "moniro.derivedEnv" -}}
MONIRO_NATS_URL: "It is the NATS every service uses: the release's, or nats.url; set nats.url (with nats.deploy=false) instead"
MONIRO_NATS_USER: "With the release's NATS each service logs in as the user of its own name, allowed only its own subjects; for your own NATS set nats.user (with nats.deploy=false) instead"
MONIRO_NATS_PASSWORD: "It is the service's NATS login, read from the chart's Secret; set secrets.natsPasswords.<name> (the release's NATS) or secrets.natsPassword (your own) instead"
MONIRO_NATS_TOKEN: "It is the services' NATS login, read from the chart's Secret; set secrets.natsToken (your own NATS) instead"
MONIRO_REDIS_URL: "It is the Redis every service uses: the release's, or redis.url; set redis.url (with redis.deploy=false) instead"
MONIRO_REDIS_USERNAME: "It is the Redis ACL user the chart limits to keys under redis.prefix; set redis.username instead"
MONIRO_REDIS_PASSWORD: "It is the Redis login, read from the chart's Secret; set secrets.redisPassword instead"
MONIRO_REDIS_PREFIX: "It must match the ACL key pattern (~<prefix>*) of the release's Redis user: another prefix puts this service's keys outside its ACL and apart from the other services' keys; set redis.prefix instead"
MONIRO_NAMESPACE: "It is the first token of every NATS subject, the namespace the release's NATS permissions are written for; set subjectNamespace instead"
MONIRO_API_KEYS: "It is a secret, read from the chart's Secret (a value here would be plain text in the Deployment); set secrets.gatewayApiKeys (or the key in secrets.existingSecret) instead"
ANTHROPIC_API_KEY: "It is a secret, read from the chart's Secret (a value here would be plain text in the Deployment); set secrets.anthropicApiKey (or the key in secrets.existingSecret) instead"
MONIRO_HTTP_PORT: "It is the port of the container, its probes, its Service and its scrape annotation; set services.<name>.port instead"
{{- end -}}

{{/*
Fails the render when services.<name>.env sets a variable of moniro.derivedEnv.
Call with (dict "name" $name "env" $svc.env).
*/}}
{{- define "moniro.checkEnv" -}}
{{- $derived := include "moniro.derivedEnv" . | fromYaml -}}
{{- range $variable, $value := .env | default dict -}}
{{- with index $derived $variable -}}
{{- fail (printf "services.%s.env.%s: the chart sets %s itself, and a value here would replace it. %s" $.name $variable $variable (replace "<name>" $.name .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Pod settings of NATS and Redis: non-root, no service-account token. */}}
{{- define "moniro.serverContainerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The five services, space-separated (each logs in to the release's NATS as the user of its name). */}}
{{- define "moniro.serviceNames" -}}
gateway agent-runner tool-executor scheduler signal-bridge
{{- end -}}

{{/*
Key of a service's NATS password, in the Secret and in the NATS pod's environment:
MONIRO_NATS_PASSWORD_<SERVICE> (passwordVariable in libs/bus/src/nats-permissions.ts).
Call with the service name.
*/}}
{{- define "moniro.natsPasswordKey" -}}
{{- printf "MONIRO_NATS_PASSWORD_%s" (. | upper | replace "-" "_") -}}
{{- end -}}

{{/*
Prefix of the JetStream stream names for subjectNamespace (createSubjects in
libs/envelopes): none for "moniro", else the namespace uppercased, every
character outside [A-Z0-9_] replaced by "_", and "_" (team-a: TEAM_A_).
*/}}
{{- define "moniro.streamPrefix" -}}
{{- if ne .Values.subjectNamespace "moniro" -}}
{{- printf "%s_" (regexReplaceAll "[^A-Z0-9_]" (upper .Values.subjectNamespace) "_") -}}
{{- end -}}
{{- end -}}

{{/*
The release's nats.conf: client port, monitoring, JetStream on /data, and one
user per service with only its subjects (files/nats-authorization.conf, written
by `npm run nats-config`), for subjectNamespace. The namespace goes in first: it
is lowercase, so it cannot spell the other placeholder; the prefix (uppercase)
could spell HELM_NAMESPACE (subjectNamespace helm_namespace).
*/}}
{{- define "moniro.natsConf" -}}
{{- $authorization := .Files.Get "files/nats-authorization.conf" -}}
{{- if not (contains "HELM_NAMESPACE" $authorization) -}}
{{- fail "files/nats-authorization.conf is missing from the chart or has no HELM_NAMESPACE placeholder: run 'npm run nats-config'" -}}
{{- end -}}
port: 4222
http_port: 8222
jetstream {
  store_dir: "/data"
}
{{ $authorization | replace "HELM_NAMESPACE" .Values.subjectNamespace | replace "HELM_STREAM_PREFIX" (include "moniro.streamPrefix" .) | trimSuffix "\n" }}
{{- end -}}

{{/*
The ACL rules of the services' user on the release's Redis, each quoted for sh:
redisAclRules(redis.prefix) of libs/store/src/redis-acl.ts (docs/redis-keys.md,
"The services' Redis user"): keys under the prefix only, no Pub/Sub channels,
every command but @dangerous, with INFO, CLIENT ID and CLIENT UNBLOCK given back.
A prefix that cannot be an ACL key pattern (empty, or with whitespace, '*', '?',
'[', ']' or '\', as redisAclRules refuses: JavaScript's \s spelled out for RE2)
fails the render.
*/}}
{{- define "moniro.redisAclRules" -}}
{{- $prefix := toString (.Values.redis.prefix | default "") -}}
{{- if or (eq $prefix "") (regexMatch `[\t\n\v\f\r\p{Zs}\x{2028}\x{2029}\x{feff}*?\[\]\\]` $prefix) -}}
{{- fail (printf "redis.prefix %q cannot be an ACL key pattern of the release's Redis user (docs/redis-keys.md, \"The services' Redis user\"): use a non-empty prefix of letters, digits, ':', '-', '_' or '.', without whitespace, '*', '?', '[', ']' or '\\'" $prefix) -}}
{{- end -}}
{{- $rules := list (printf "~%s*" $prefix) "resetchannels" "+@all" "-@dangerous" "+info" "+client|id" "+client|unblock" -}}
{{- range $i, $rule := $rules -}}
{{- if $i }} {{ end -}}
'{{ $rule | replace "'" "'\\''" }}'
{{- end -}}
{{- end -}}
