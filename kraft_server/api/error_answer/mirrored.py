"""Error answers that mirror the request: the error on every topic, partition, group,
resource or entry the request names, in the request's order (Produce's: a Java
``HashMap``'s, ``java_order.py``). One function per API; each takes the request
version, the request body, a known error code and the exception's message (None: the
error's default exception) and returns the response body. ThrottleTimeMs is left at 0.
"""
from __future__ import annotations

from wire.messages import (
    alter_client_quotas_response as acq, alter_configs_response as ac, alter_partition_reassignments_response as apr,
    alter_user_scram_credentials_response as aus, create_acls_response as cac, create_partitions_response as cp,
    create_topics_response as ct, delete_acls_response as dac, delete_groups_response as dg,
    delete_topics_response as dt, describe_configs_response as dc, describe_groups_response as dgr,
    describe_topic_partitions_response as dtp, elect_leaders_response as el, fetch_response as fe,
    find_coordinator_response as fc, incremental_alter_configs_response as iac,
    list_offsets_response as lo, list_partition_reassignments_response as lpr, metadata_response as md,
    offset_commit_response as oc, offset_fetch_response as of, offset_for_leader_epoch_response as ofe,
    produce_response as pr,
)
from wire.uuids import ZERO_UUID

from .java_order import produce_order
from .messages import api_message, default_message

NO_NODE = {"node_id": -1, "host": "", "port": -1}  # Kafka's Node.noNode()


def produce(version, body, code, message):
    if body.acks == 0:
        return None  # the producer wants no answer
    if any(p.records is None for t in body.topic_data for p in t.partition_data):
        return None  # Kafka's getErrorResponse fails sizing null records: nothing is answered
    text = api_message(code, message)
    topics: dict = {}
    for name, topic_id, index in produce_order(body):
        topic = topics.get((name, topic_id))
        if topic is None:
            topic = topics[(name, topic_id)] = pr.TopicProduceResponse(name=name, topic_id=topic_id,
                                                                        partition_responses=[])
        topic.partition_responses.append(pr.PartitionProduceResponse(
            index=index, error_code=code, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1,
            record_errors=[], error_message=text))
    return pr.ProduceResponse(responses=list(topics.values()))


def fetch(version, body, code, message):
    # v13+: the top-level code alone; before, also on every partition
    topics = [] if version >= 13 else [
        fe.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
            fe.PartitionData(partition_index=p.partition, error_code=code, high_watermark=-1, records=b"")
            for p in t.partitions])
        for t in body.topics]
    return fe.FetchResponse(error_code=code, session_id=body.session_id, responses=topics)


def list_offsets(version, body, code, message):
    return lo.ListOffsetsResponse(topics=[
        lo.ListOffsetsTopicResponse(name=t.name, partitions=[
            lo.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=code,
                                            offset=-1, timestamp=-1)
            for p in t.partitions])
        for t in body.topics])


def metadata(version, body, code, message):
    topics = [md.MetadataResponseTopic(name="" if t.name is None else t.name, topic_id=t.topic_id,
                                       error_code=code, is_internal=False, partitions=[])
              for t in body.topics or ()]
    return md.MetadataResponse(topics=topics, error_code=code)


def offset_commit(version, body, code, message):
    return oc.OffsetCommitResponse(topics=[
        oc.OffsetCommitResponseTopic(name=t.name, topic_id=t.topic_id, partitions=[
            oc.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
            for p in t.partitions])
        for t in body.topics])


def offset_fetch(version, body, code, message):
    if version < 2:  # no top-level error yet: on every partition
        return of.OffsetFetchResponse(topics=[
            of.OffsetFetchResponseTopic(name=t.name, partitions=[
                of.OffsetFetchResponsePartition(partition_index=i, error_code=code, committed_offset=-1,
                                                metadata="", committed_leader_epoch=-1)
                for i in t.partition_indexes])
            for t in body.topics])
    if version < 8:  # one group, a top-level error
        return of.OffsetFetchResponse(error_code=code)
    return of.OffsetFetchResponse(groups=[of.OffsetFetchResponseGroup(group_id=g.group_id, error_code=code)
                                          for g in body.groups])


def find_coordinator(version, body, code, message):
    text = default_message(code)
    if version < 4:
        return fc.FindCoordinatorResponse(error_code=code, error_message=text, **NO_NODE)
    return fc.FindCoordinatorResponse(coordinators=[
        fc.Coordinator(key=key, error_code=code, error_message=text, **NO_NODE)
        for key in body.coordinator_keys])


def describe_groups(version, body, code, message):
    return dgr.DescribeGroupsResponse(groups=[
        dgr.DescribedGroup(group_id=g, error_code=code, group_state="", protocol_type="", protocol_data="",
                           members=[], authorized_operations=-(1 << 31))
        for g in body.groups])


def create_topics(version, body, code, message):
    text = api_message(code, message)
    return ct.CreateTopicsResponse(topics=[
        ct.CreatableTopicResult(name=t.name, error_code=code, error_message=text) for t in body.topics])


def delete_topics(version, body, code, message):
    wanted = ([(t.name, t.topic_id) for t in body.topics] if version >= 6
              else [(n, ZERO_UUID) for n in body.topic_names])
    return dt.DeleteTopicsResponse(responses=[
        dt.DeletableTopicResult(name=n, topic_id=i, error_code=code) for n, i in wanted])


def offset_for_leader_epoch(version, body, code, message):
    return ofe.OffsetForLeaderEpochResponse(topics=[
        ofe.OffsetForLeaderTopicResult(topic=t.topic, partitions=[
            ofe.EpochEndOffset(partition=p.partition, error_code=code, leader_epoch=-1, end_offset=-1)
            for p in t.partitions])
        for t in body.topics])


def create_acls(version, body, code, message):
    text = api_message(code, message)
    return cac.CreateAclsResponse(results=[cac.AclCreationResult(error_code=code, error_message=text)
                                           for _ in body.creations])


def delete_acls(version, body, code, message):
    text = api_message(code, message)
    return dac.DeleteAclsResponse(filter_results=[
        dac.DeleteAclsFilterResult(error_code=code, error_message=text, matching_acls=[]) for _ in body.filters])


def describe_configs(version, body, code, message):
    text = default_message(code)
    return dc.DescribeConfigsResponse(results=[
        dc.DescribeConfigsResult(error_code=code, error_message=text, resource_type=r.resource_type,
                                 resource_name=r.resource_name)
        for r in body.resources])


def _alter_configs(module, response):
    def answer(version, body, code, message):
        text = api_message(code, message)
        return response(responses=[
            module.AlterConfigsResourceResponse(error_code=code, error_message=text, resource_type=r.resource_type,
                                                resource_name=r.resource_name)
            for r in body.resources])
    return answer


def create_partitions(version, body, code, message):
    text = api_message(code, message)
    return cp.CreatePartitionsResponse(results=[
        cp.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=text) for t in body.topics])


def delete_groups(version, body, code, message):
    return dg.DeleteGroupsResponse(results=[dg.DeletableGroupResult(group_id=g, error_code=code)
                                            for g in body.groups_names])


def elect_leaders(version, body, code, message):
    text = api_message(code, message)
    results = [el.ReplicaElectionResult(topic=t.topic, partition_result=[
        el.PartitionResult(partition_id=p, error_code=code, error_message=text) for p in t.partitions])
        for t in body.topic_partitions or ()]
    return el.ElectLeadersResponse(error_code=code if version >= 1 else 0, replica_election_results=results)


def alter_partition_reassignments(version, body, code, message):
    text = api_message(code, message)
    return apr.AlterPartitionReassignmentsResponse(error_code=code, error_message=text, responses=[
        apr.ReassignableTopicResponse(name=t.name, partitions=[
            apr.ReassignablePartitionResponse(partition_index=p.partition_index, error_code=code,
                                              error_message=text)
            for p in t.partitions])
        for t in body.topics])


def list_partition_reassignments(version, body, code, message):
    return lpr.ListPartitionReassignmentsResponse(
        error_code=code, error_message=api_message(code, message), topics=[
            lpr.OngoingTopicReassignment(name=t.name, partitions=[
                lpr.OngoingPartitionReassignment(partition_index=i) for i in t.partition_indexes])
            for t in body.topics or ()])


def alter_client_quotas(version, body, code, message):
    text = default_message(code)
    return acq.AlterClientQuotasResponse(entries=[
        acq.EntryData(error_code=code, error_message=text, entity=[
            acq.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity])
        for entry in body.entries])


def alter_user_scram_credentials(version, body, code, message):
    text = api_message(code, message)
    users = sorted({d.name for d in body.deletions} | {u.name for u in body.upsertions}, key=_java_string_key)
    return aus.AlterUserScramCredentialsResponse(results=[
        aus.AlterUserScramCredentialsResult(user=u, error_code=code, error_message=text) for u in users])


def _java_string_key(s: str) -> bytes:
    """Java's String.compareTo order: by UTF-16 code units."""
    return s.encode("utf-16-be")


def describe_topic_partitions(version, body, code, message):
    return dtp.DescribeTopicPartitionsResponse(topics=[
        dtp.DescribeTopicPartitionsResponseTopic(name=t.name, error_code=code, is_internal=False, partitions=[])
        for t in body.topics])


MIRRORED = {
    0: produce, 1: fetch, 2: list_offsets, 3: metadata, 8: offset_commit, 9: offset_fetch,
    10: find_coordinator, 15: describe_groups, 19: create_topics, 20: delete_topics,
    23: offset_for_leader_epoch, 30: create_acls, 31: delete_acls, 32: describe_configs,
    33: _alter_configs(ac, ac.AlterConfigsResponse), 37: create_partitions, 42: delete_groups,
    43: elect_leaders, 44: _alter_configs(iac, iac.IncrementalAlterConfigsResponse),
    45: alter_partition_reassignments, 46: list_partition_reassignments, 49: alter_client_quotas,
    51: alter_user_scram_credentials, 75: describe_topic_partitions,
}
