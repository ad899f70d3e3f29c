{{/* The chart's name, truncated to 63 characters (a DNS label). */}}
{{- define "strata.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object's name: <release>-strata, or the release name when it already
contains the chart's name. */}}
{{- define "strata.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "strata.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "strata.selectorLabels" -}}
app.kubernetes.io/name: {{ include "strata.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "strata.labels" -}}
helm.sh/chart: {{ include "strata.chart" . }}
{{ include "strata.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: strata
{{- end -}}

{{- define "strata.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "strata.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "strata.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The metrics Service's name; Prometheus Operator also uses it as the job label. */}}
{{- define "strata.metricsServiceName" -}}
{{- printf "%s-metrics" (include "strata.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- end -}}

{{/* rbacDocs reads files/rbac/role.yaml, the copy `make manifests` keeps of
config/rbac/role.yaml (generated from the kubebuilder markers), as a dict kind -> rules:
ClusterRole (the operator's cluster-wide rules) and Role (leader election, in its namespace). */}}
{{- define "strata.generatedRules" -}}
{{- $out := dict -}}
{{- range $doc := regexSplit "(?m)^---\\s*$" (.Files.Get "files/rbac/role.yaml") -1 -}}
{{- $obj := fromYaml $doc -}}
{{- if and $obj $obj.kind -}}
{{- $_ := set $out $obj.kind $obj.rules -}}
{{- end -}}
{{- end -}}
{{- if not (hasKey $out "ClusterRole") -}}
{{- fail "files/rbac/role.yaml has no ClusterRole: run `make manifests`" -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- define "strata.inlineMap" -}}
{{- $pairs := list -}}
{{- range $k, $v := . -}}
{{- $pairs = append $pairs (printf "%s=%s" $k $v) -}}
{{- end -}}
{{- join ", " $pairs -}}
{{- end -}}

{{/* The Secret holding the metrics endpoint's serving certificate (tls.crt, tls.key) and the
CA that signed it (ca.crt), which the ServiceMonitor verifies the endpoint with. */}}
{{- define "strata.metricsTLSSecretName" -}}
{{- printf "%s-metrics-tls" (include "strata.fullname" . | trunc 51 | trimSuffix "-") -}}
{{- end -}}

{{/* The names the metrics Service answers to, for the serving certificate. */}}
{{- define "strata.metricsDNSNames" -}}
{{- $svc := include "strata.metricsServiceName" . -}}
{{- $ns := .Release.Namespace -}}
{{- toJson (list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns)) -}}
{{- end -}}
