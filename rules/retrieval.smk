rule encode_texts:
    input:
        texts=encode_texts_input,
    output:
        embeddings=f"{RESULTS}/embeddings/{{model}}/{{benchmark}}/{{kind}}.npy",
        ids=f"{RESULTS}/embeddings/{{model}}/{{benchmark}}/{{kind}}.ids.tsv",
    params:
        model=model_entry,
        cache=EMBEDDING_CACHE,
    log:
        f"{RESULTS}/logs/encode_texts/{{model}}/{{benchmark}}/{{kind}}.log",
    benchmark:
        f"{RESULTS}/timing/encode_texts/{{model}}/{{benchmark}}/{{kind}}.tsv"
    # One thread per job: two encode jobs on two cores beat one job on both, and torch slows
    # down badly when its threads share a core with another process.
    threads: 1
    resources:
        mem_mb=encode_mem_mb,
        gpu=encode_gpu,
        runtime=240,
    conda:
        "../envs/retrieval.yaml"
    script:
        "../scripts/encode_texts.py"


rule retrieve:
    input:
        unpack(retrieve_inputs),
    output:
        run=f"{RESULTS}/runs/{{benchmark}}/{{model}}/{{setting}}.trec",
    params:
        model=model_entry,
        top_k=config.get("retrieval", {}).get("top_k", 1000),
        corpus_languages=corpus_languages_of,
        id_prefixes=corpus_id_prefixes,
        embedding_model=embedding_model_of,
    log:
        f"{RESULTS}/logs/retrieve/{{benchmark}}/{{model}}/{{setting}}.log",
    benchmark:
        f"{RESULTS}/timing/retrieve/{{benchmark}}/{{model}}/{{setting}}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/retrieval.yaml"
    script:
        "../scripts/retrieve.py"


rule estimate_renorm_mean:
    input:
        embeddings=f"{RESULTS}/embeddings/{{model}}/{{benchmark}}/corpus.npy",
    output:
        mean=f"{RESULTS}/embeddings/{{model}}/{{benchmark}}/corpus.mean.npy",
        provenance=f"{RESULTS}/embeddings/{{model}}/{{benchmark}}/corpus.mean.json",
    wildcard_constraints:
        benchmark=text_collection_names(),
    log:
        f"{RESULTS}/logs/estimate_renorm_mean/{{model}}/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/retrieval.yaml"
    script:
        "../scripts/estimate_renorm_mean.py"
